"""The offline model providers litellm calls: the oracle teacher, its planted mistakes, the local student."""
