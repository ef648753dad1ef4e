"""What the CLI asks of a running Dagster webserver (`env0-posttrain ui`), through its public GraphQL API.

The webserver writes to the instance its daemon reads, so partitions and backfills sent here land where
they run, whatever DAGSTER_HOME the caller has. `dagster_graphql.DagsterGraphQLClient` has no backfill
or partition call, so the documented mutations go out through gql, the library that client is built on.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

UI_HOST = "127.0.0.1"  # where `env0-posttrain ui` serves by default (the CLI reads these: gql is imported on use)
UI_PORT = 3000
DEFAULT_UI_URL = f"http://{UI_HOST}:{UI_PORT}"

_ERROR_FIELDS = "__typename ... on Error { message } ... on PythonError { className }"

VERSION = "query Env0Version { version }"
INSTANCE = "query Env0Instance { instance { hasInfo info } }"
LOCATION = "env0_posttrain"  # the code location name workspace.yaml gives this project
ASSET_NODES = (
    """query Env0AssetNodes($keys: [AssetKeyInput!]) {
      assetNodes(assetKeys: $keys) {
        assetKey { path }
        isMaterializable
        partitionDefinition { dimensionTypes { type dynamicPartitionsDefinitionName } }
        repository { name location { name } }
      }
    }"""
)
ADD_PARTITION = (
    f"""mutation Env0AddPartition($repo: RepositorySelector!, $name: String!, $key: String!) {{
      addDynamicPartition(repositorySelector: $repo, partitionsDefName: $name, partitionKey: $key) {{
        {_ERROR_FIELDS}
      }}
    }}"""
)
LAUNCH_BACKFILL = (
    f"""mutation Env0LaunchBackfill($params: LaunchBackfillParams!) {{
      launchPartitionBackfill(backfillParams: $params) {{
        ... on LaunchBackfillSuccess {{ backfillId }}
        ... on PartitionKeysNotFoundError {{ partitionKeys }}
        {_ERROR_FIELDS}
      }}
    }}"""
)
BACKFILL = (
    f"""query Env0Backfill($id: String!) {{
      partitionBackfillOrError(backfillId: $id) {{
        ... on PartitionBackfill {{
          id status isAssetBackfill title description partitionNames
          assetSelection {{ path }} tags {{ key value }}
        }}
        {_ERROR_FIELDS}
      }}
    }}"""
)


class UiError(RuntimeError):
    """The webserver did not answer, or answered with an error (named by its GraphQL type)."""


class UiUnreachable(UiError):
    pass


@dataclass(frozen=True)
class AssetNode:
    key: str
    materializable: bool
    dynamic_partitions: tuple[str, ...]  # names of the dynamic partitions definitions it is partitioned by
    repository: tuple[str, str]  # (location name, repository name)


def graphql_endpoint(url: str) -> str:
    url = url.rstrip("/")
    return url if url.endswith("/graphql") else f"{url}/graphql"


def _key_input(key: str) -> dict[str, list[str]]:
    return {"path": key.split("/")}


def _error(what: str, node: Mapping[str, Any]) -> UiError:
    kind = node.get("className") or node.get("__typename")
    return UiError(f"{what}: {node.get('__typename')}{f' ({kind})' if kind != node.get('__typename') else ''}: "
                   f"{node.get('message', '(no message)')}")


class UiGraphQL:
    """One HTTP connection to the webserver's /graphql: `with UiGraphQL(url) as ui: ui.asset_nodes(...)`."""

    def __init__(self, url: str = DEFAULT_UI_URL, timeout_s: float = 30.0):
        from gql import Client
        from gql.transport.httpx import HTTPXTransport

        self.url = url
        self.endpoint = graphql_endpoint(url)
        self._client = Client(transport=HTTPXTransport(url=self.endpoint, timeout=timeout_s),
                              execute_timeout=timeout_s)
        self._session = None

    def __enter__(self) -> UiGraphQL:
        self._session = self._client.connect_sync()
        return self

    def __exit__(self, *exc) -> None:
        self._client.close_sync()
        self._session = None

    def _execute(self, request: str, **variables: Any) -> dict[str, Any]:
        from gql import GraphQLRequest
        from gql.transport.exceptions import (
            TransportConnectionFailed,
            TransportError,
            TransportQueryError,
            TransportServerError,
        )

        req = GraphQLRequest(request, variable_values=variables)
        try:
            return self._session.execute(req)
        except TransportConnectionFailed as err:
            raise UiUnreachable(f"nothing answers at {self.endpoint} ({err})") from err
        except TransportServerError as err:
            raise UiError(f"{self.endpoint} answered HTTP {err.code}; is it a Dagster webserver?") from err
        except TransportQueryError as err:
            raise UiError(f"{self.endpoint} rejected the query: {err.errors or err}") from err
        except TransportError as err:
            raise UiError(f"{self.endpoint}: {type(err).__name__}: {err}") from err

    def version(self) -> str:
        """Dagster's version on the server: a cheap first call that tells whether anything answers."""
        return self._execute(VERSION)["version"]

    def instance_home(self) -> str | None:
        """The server instance's DAGSTER_HOME (its local artifact storage's base_dir), None when the server
        does not show its instance config."""
        import yaml

        res = self._execute(INSTANCE)["instance"]
        if not res.get("hasInfo") or not res.get("info"):
            return None
        info = yaml.safe_load(res["info"]) or {}
        storage = info.get("local_artifact_storage") or {}
        return (storage.get("config") or {}).get("base_dir") if isinstance(storage, dict) else None

    def asset_nodes(self, keys: Sequence[str]) -> dict[str, AssetNode]:
        """The assets of the webserver's workspace among `keys` (missing keys are absent from the answer)."""
        nodes = self._execute(ASSET_NODES, keys=[_key_input(k) for k in keys])["assetNodes"]
        out = {}
        for n in nodes:
            key = "/".join(n["assetKey"]["path"])
            dims = (n.get("partitionDefinition") or {}).get("dimensionTypes") or []
            out[key] = AssetNode(
                key=key,
                materializable=n["isMaterializable"],
                dynamic_partitions=tuple(d["dynamicPartitionsDefinitionName"] for d in dims
                                         if d["type"] == "DYNAMIC" and d["dynamicPartitionsDefinitionName"]),
                repository=(n["repository"]["location"]["name"], n["repository"]["name"]),
            )
        return out

    def add_dynamic_partition(self, repository: tuple[str, str], partitions_def: str, key: str) -> bool:
        """True when added, False when the instance already has it."""
        location, repo = repository
        res = self._execute(ADD_PARTITION, repo={"repositoryLocationName": location, "repositoryName": repo},
                            name=partitions_def, key=key)["addDynamicPartition"]
        if res["__typename"] == "AddDynamicPartitionSuccess":
            return True
        if res["__typename"] == "DuplicateDynamicPartitionError":
            return False
        raise _error(f"adding partition {key!r} to {partitions_def!r}", res)

    def launch_asset_backfill(
        self,
        asset_keys: Sequence[str],
        partition_names: Sequence[str],
        *,
        tags: Mapping[str, str],
        title: str | None = None,
        description: str | None = None,
    ) -> str:
        """`launchPartitionBackfill` over assets x partitions: the backfill id (REQUESTED; the daemon runs it)."""
        params = {
            "assetSelection": [_key_input(k) for k in asset_keys],
            "partitionNames": list(partition_names),
            "tags": [{"key": k, "value": v} for k, v in tags.items()],
            "title": title,
            "description": description,
        }
        res = self._execute(LAUNCH_BACKFILL, params=params)["launchPartitionBackfill"]
        if res["__typename"] == "LaunchBackfillSuccess":
            return res["backfillId"]
        err = _error("launchPartitionBackfill", res)
        if res.get("partitionKeys"):
            err = UiError(f"{err} (partitions {res['partitionKeys']})")
        raise err

    def backfill(self, backfill_id: str) -> dict[str, Any]:
        """The backfill as the UI lists it: id, status, partitionNames, assetSelection, tags, title..."""
        res = self._execute(BACKFILL, id=backfill_id)["partitionBackfillOrError"]
        if res["__typename"] != "PartitionBackfill":
            raise _error(f"backfill {backfill_id}", res)
        return res
