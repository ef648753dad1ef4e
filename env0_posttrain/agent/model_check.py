"""Is a model id one litellm can route, and is its key there? Checked where a spec is written, not 30 s into a run.

litellm resolves the provider from the id's prefix (`get_llm_provider`): an unknown prefix (`env0-orcale/oracle`)
can never be called. For vendors that name their own models and whose catalogue litellm ships (OpenAI, Anthropic,
Gemini...), an id litellm does not list is most likely a typo; the same prefix with an `api_base` is any
OpenAI-compatible server, whose names are its own. Servers (vLLM, SGLang, Azure deployments, OpenRouter...) accept
names litellm cannot know, so only their provider is checked. A key variable that is not set is a warning: the
process that plays the run may have it where this one does not.
"""

from __future__ import annotations

import difflib
import os
from importlib.metadata import version
from dataclasses import dataclass

from .llm import ENV0_PROVIDERS, litellm, provider_of

# Vendors whose model names litellm's packaged price map lists (without an api_base the id must be one of them).
CATALOGUED = ("openai", "anthropic", "gemini", "mistral", "deepseek", "xai", "groq")


@dataclass(frozen=True)
class ModelIssue:
    field: str  # the ModelEndpoint field to fix: "model" or "api_key_env"
    message: str
    fatal: bool


def _suggest(word: str, choices: list[str]) -> str:
    close = difflib.get_close_matches(word, choices, n=1, cutoff=0.6)
    return f" (did you mean {close[0]!r}?)" if close else ""


def _inner(model: str) -> str:
    while provider_of(model) == "env0-faulty":  # the fault wrapper calls whatever it wraps
        model = model.split("/", 1)[1]
    return model


def _provider_issue(model: str) -> ModelIssue | None:
    prefix = provider_of(model)
    if prefix in ENV0_PROVIDERS:
        return None
    try:
        litellm.get_llm_provider(model)
    except Exception:  # litellm raises BadRequestError("LLM Provider NOT provided") for an unknown prefix
        # litellm's own providers are an enum; those registered at run time (custom_provider_map) plain strings
        known = [*ENV0_PROVIDERS, *(str(getattr(p, "value", p)) for p in litellm.provider_list)]
        what = f"provider {prefix!r}" if prefix else "no provider prefix"
        return ModelIssue("model", f"litellm cannot route {model!r}: {what}{_suggest(prefix, known)}; a model id is "
                          "<provider>/<model>, e.g. openai/gpt-4o-mini, hosted_vllm/Qwen/Qwen3.5-9B, env0-oracle/oracle",
                          fatal=True)
    return None


def _catalogue_issue(model: str, api_base: str | None) -> ModelIssue | None:
    name, provider, *_ = litellm.get_llm_provider(model)
    if provider not in CATALOGUED or api_base or name.startswith("ft:"):
        return None
    try:
        litellm.get_model_info(model)
        return None
    except Exception:  # "This model isn't mapped yet"
        listed = [m.split("/", 1)[-1] for m in litellm.models_by_provider.get(provider, ())]
        return ModelIssue("model", f"{provider} has no model {name!r} in litellm {version('litellm')}'s list"
                          f"{_suggest(name, listed)}; an OpenAI-compatible server of that name needs teacher.api_base",
                          fatal=True)


def _key_issue(model: str, api_key_env: str | None) -> ModelIssue | None:
    if provider_of(model) in ENV0_PROVIDERS:
        return None
    if api_key_env:
        if os.environ.get(api_key_env):
            return None
        return ModelIssue("api_key_env", f"the environment variable {api_key_env} is not set here; the process that "
                          "plays the run (the Dagster daemon's runs, `run materialize`) must have it", fatal=False)
    missing = litellm.validate_environment(model).get("missing_keys") or []
    if not missing:
        return None
    return ModelIssue("api_key_env", f"no key variable named and litellm's default {', '.join(missing)} is not set; "
                      "name the variable that holds the key (never the key itself)", fatal=False)


def check_model(model: str, api_base: str | None = None, api_key_env: str | None = None) -> list[ModelIssue]:
    """What is wrong with calling `model` (fatal issues first); [] when litellm can route it and its key is set."""
    inner = _inner(model)
    issue = _provider_issue(inner)
    if issue is not None:
        return [issue]
    issues = [i for i in (_catalogue_issue(inner, api_base) if provider_of(inner) not in ENV0_PROVIDERS else None,
                          _key_issue(inner, api_key_env)) if i is not None]
    return sorted(issues, key=lambda i: not i.fatal)
