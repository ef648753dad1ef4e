"""What a CUDA training run checks and plans before step 1: its fast kernels, the activation checkpointing that fills
the memory budget, and kernel patches kept to the model they were applied to."""
