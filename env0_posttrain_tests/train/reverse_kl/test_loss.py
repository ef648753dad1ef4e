"""The reverse-KL loss against a hand computation on small tensors."""

from __future__ import annotations

import math

import torch

from env0_posttrain.train.reverse_kl.loss import reverse_kl_loss, token_logprobs, vocab_reverse_kl


def test_loss_value_and_gradient_match_the_hand_computation():
    new = torch.tensor([[-1.0, -2.0, -0.5], [-0.3, -4.0, -1.0]], requires_grad=True)
    old = torch.tensor([[-1.2, -2.0, -0.7], [-0.3, -3.0, -1.0]])
    teacher = torch.tensor([[-0.2, -9.0, -0.1], [-1.3, -1.0, -5.0]])
    mask = torch.tensor([[0, 1, 1], [1, 1, 0]])
    reward = torch.tensor([0.5, -0.25])
    parts = reverse_kl_loss(new, old, teacher, mask, kl_coef=2.0, reward_advantage=reward)
    # by hand: the four sampled tokens (0,1) (0,2) (1,0) (1,1)
    adv = {(0, 1): -2 * (-2.0 + 9.0) + 0.5, (0, 2): -2 * (-0.7 + 0.1) + 0.5,
           (1, 0): -2 * (-0.3 + 1.3) - 0.25, (1, 1): -2 * (-3.0 + 1.0) - 0.25}
    ratio = {(0, 1): 1.0, (0, 2): math.exp(0.2), (1, 0): 1.0, (1, 1): math.exp(-1.0)}
    want = -sum(ratio[k] * adv[k] for k in adv) / 4
    assert math.isclose(parts.loss.item(), want, rel_tol=1e-6)
    assert parts.tokens == 4
    assert math.isclose(parts.reverse_kl, ((-2.0 + 9.0) + (-0.5 + 0.1) + (-0.3 + 1.3) + (-4.0 + 1.0)) / 4, rel_tol=1e-6)
    parts.loss.backward()
    # d/d new of -ratio*A/4 = -ratio*A/4 on sampled tokens, 0 elsewhere (the masked tokens get no gradient)
    grad = torch.zeros(2, 3)
    for (i, j), a in adv.items():
        grad[i, j] = -ratio[(i, j)] * a / 4
    assert torch.allclose(new.grad, grad, atol=1e-6)


def test_pure_kl_pushes_up_the_tokens_the_teacher_likes_more_and_down_the_others():
    new = torch.tensor([[-2.0, -0.5]], requires_grad=True)
    teacher = torch.tensor([[-0.5, -2.0]])
    reverse_kl_loss(new, new.detach().clone(), teacher, torch.ones(1, 2)).loss.backward()
    assert new.grad[0, 0] < 0 < new.grad[0, 1]  # gradient descent raises token 0, lowers token 1


def test_token_logprobs_and_the_exact_kl_match_torch_by_hand():
    torch.manual_seed(0)
    logits = torch.randn(1, 4, 5)

    class Model:
        def __call__(self, input_ids, attention_mask):
            return type("Out", (), {"logits": logits})

    ids = torch.tensor([[3, 1, 4, 0]])
    lp = token_logprobs(Model(), ids, torch.ones_like(ids))
    by_hand = [math.log(math.exp(logits[0, i, ids[0, i + 1]]) / float(logits[0, i].exp().sum())) for i in range(3)]
    assert torch.allclose(lp[0], torch.tensor(by_hand), atol=1e-6)
    other = torch.randn(1, 4, 5)
    p, q = torch.softmax(logits, -1), torch.softmax(other, -1)
    kl = [float((p[0, i] * (p[0, i] / q[0, i]).log()).sum()) for i in range(4)]
    mask = torch.tensor([[1, 0, 1, 0]])
    assert math.isclose(vocab_reverse_kl(logits, other, mask), (kl[0] + kl[2]) / 2, rel_tol=1e-5)
    assert vocab_reverse_kl(logits, logits, mask) < 1e-6
