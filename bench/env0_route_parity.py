"""Which REST routes env0's Google mocks serve that the workspace does not.

    .venv/bin/python bench/env0_route_parity.py [--env0-root DIR] [--missing-only]

Reads the route decorators of env0's `packages/environments/mock-{gmail,gcal,gdrive,gdoc}/*/api/*.py` (with
Python's ast, from the bare mirror or a checkout; nothing is imported or run), maps each (verb, path) to the
real API method of the discovery documents in env0's `docker/gws-discovery-cache`, and compares the method ids
with the workspace's tools. Routes that are no real API method (e.g. mock-gdoc's /v1/documents/{id}/comments)
are listed as "not a real method". Prints one table per service and exits 1 when a real method is missing.
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import re
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

from env0_posttrain.workspace import TOOLS  # noqa: E402

MIRROR = "/work/.mirror/benchflow-ai+env0/repo"
MOCKS = {"gmail": ("mock-gmail", "gmail_v1.json"), "calendar": ("mock-gcal", "calendar_v3.json"),
         "drive": ("mock-gdrive", "drive_v3.json"), "docs": ("mock-gdoc", "docs_v1.json")}
VERBS = {"get", "post", "put", "patch", "delete"}
# mock-gdoc's comments and permissions are no Docs method: on a Doc they are Drive's, on the doc's file id.
EQUIVALENT = [(r"v1/documents/{documentId}/comments/{commentId}/(resolve|reopen)",
               "drive.replies.create (body.action resolve|reopen)"),
              (r"v1/documents/{documentId}/comments/{commentId}/replies", "drive.replies.*"),
              (r"v1/documents/{documentId}/comments", "drive.comments.*"),
              (r"v1/documents/{documentId}/permissions", "drive.permissions.*")]


class Tree:
    """Files of an env0 checkout, or of a bare mirror's HEAD."""

    def __init__(self, root: str):
        self.root = Path(root)
        self.bare = not (self.root / "packages").exists()

    def ls(self, prefix: str) -> list[str]:
        if self.bare:
            out = subprocess.run(["git", "-C", str(self.root), "ls-tree", "-r", "--name-only", "HEAD", prefix],
                                 capture_output=True, text=True, check=True).stdout
            return out.split()
        return [str(p.relative_to(self.root)) for p in (self.root / prefix).rglob("*") if p.is_file()]

    def read(self, path: str) -> str:
        if self.bare:
            return subprocess.run(["git", "-C", str(self.root), "show", f"HEAD:{path}"], capture_output=True,
                                  text=True, check=True).stdout
        return (self.root / path).read_text()


def _string(node: ast.AST, consts: dict[str, str]) -> str | None:
    """A literal or f-string path with module constants filled in (`f"{GMAIL_PREFIX}/users/{{userId}}"`)."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.Name):
        return consts.get(node.id)
    if isinstance(node, ast.JoinedStr):
        out = ""
        for v in node.values:
            if isinstance(v, ast.Constant):
                out += str(v.value)
            elif isinstance(v, ast.FormattedValue) and isinstance(v.value, ast.Name) and v.value.id in consts:
                out += consts[v.value.id]
            else:
                return None
        return out
    return None


def env0_routes(tree: Tree, mock: str) -> list[tuple[str, str]]:
    """(VERB, path) of every API route of one mock: router decorators plus the prefix each router is mounted at."""
    files = [p for p in tree.ls(f"packages/environments/{mock}") if re.search(r"/api/[a-z_]+\.py$", p)]
    prefixes: dict[str, str] = {}
    routes: list[tuple[str, str, str]] = []  # (module, verb, path)
    for path in files:
        mod = ast.parse(tree.read(path))
        consts = {t.id: n.value.value for n in mod.body if isinstance(n, ast.Assign) and isinstance(n.value, ast.Constant)
                  and isinstance(n.value.value, str) for t in n.targets if isinstance(t, ast.Name)}
        name = Path(path).stem
        for node in ast.walk(mod):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
                if node.func.attr == "include_router" and node.args and isinstance(node.args[0], ast.Attribute) \
                        and isinstance(node.args[0].value, ast.Name):
                    pre = next((_string(k.value, consts) for k in node.keywords if k.arg == "prefix"), "") or ""
                    prefixes[node.args[0].value.id] = pre
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                for d in node.decorator_list:
                    if isinstance(d, ast.Call) and isinstance(d.func, ast.Attribute) and d.func.attr in VERBS and d.args:
                        p = _string(d.args[0], consts)
                        owner = d.func.value.id if isinstance(d.func.value, ast.Name) else ""
                        if p is not None:
                            routes.append((name if owner == "router" else "", d.func.attr.upper(), p))
    out = []
    for module, verb, p in routes:
        full = (prefixes.get(module, "") if module else "") + p
        if full.startswith(("/_admin", "/health")) or not full.startswith("/"):
            continue
        out.append((verb, full.lstrip("/")))
    return sorted(set(out))


def discovery_methods(doc: dict) -> list[tuple[str, re.Pattern[str], int, str]]:
    """(verb, path regex, literal length, method id) for every method, upload paths included."""
    out = []

    def add(verb: str, path: str, mid: str) -> None:
        rx = re.compile(re.sub(r"\\{\\?\+?(\w+)\\}", r"[^/]+", re.escape(path)))
        out.append((verb, rx, len(re.sub(r"{\+?\w+}", "", path)), mid))

    def walk(resources: dict) -> None:
        for r in resources.values():
            for m in r.get("methods", {}).values():
                add(m["httpMethod"], doc["servicePath"] + m["path"], m["id"])
                for proto in m.get("mediaUpload", {}).get("protocols", {}).values():
                    add(m["httpMethod"], proto["path"].lstrip("/"), m["id"])
            walk(r.get("resources", {}))

    walk(doc["resources"])
    return out


def method_of(verb: str, path: str, methods: list[tuple[str, re.Pattern[str], int, str]]) -> str | None:
    concrete = re.sub(r"{\w+}", "x", path.replace("{userId}", "me"))  # Calendar's real paths say users/me
    hits = [(lit, mid) for v, rx, lit, mid in methods if v == verb and rx.fullmatch(concrete)]
    return max(hits)[1] if hits else None


def parity(root: str) -> dict[str, dict[str, list]]:
    tree = Tree(root)
    ours = {s.method_id for s in TOOLS.values()}
    out: dict[str, dict[str, list]] = {}
    for svc, (mock, disc) in MOCKS.items():
        methods = discovery_methods(json.loads(tree.read(f"docker/gws-discovery-cache/{disc}")))
        served, missing, unreal = [], [], []
        for verb, path in env0_routes(tree, mock):
            mid = method_of(verb, path, methods)
            if mid is None:
                real = next((eq for pre, eq in EQUIVALENT if re.match(re.escape(pre).replace(r"\(resolve\|reopen\)",
                                                                                             "(resolve|reopen)"), path)), "")
                unreal.append(f"{verb} /{path}" + (f"  -> real: {real}" if real else ""))
            elif mid in ours:
                served.append(mid)
            else:
                missing.append(mid)
        out[svc] = {"served": sorted(set(served)), "missing": sorted(set(missing)), "not_real": unreal}
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--env0-root", default=os.environ.get("ENV0_ROOT", MIRROR),
                    help="an env0 checkout or bare mirror (default: %(default)s)")
    ap.add_argument("--missing-only", action="store_true")
    ap.add_argument("--service", choices=sorted(MOCKS), action="append")
    args = ap.parse_args()
    res = parity(args.env0_root)
    print(f"{'service':10} {'env0 methods':>12} {'served':>7} {'missing':>8} {'not real':>9}")
    for svc, r in res.items():
        if args.service and svc not in args.service:
            continue
        print(f"{svc:10} {len(r['served']) + len(r['missing']):>12} {len(r['served']):>7} {len(r['missing']):>8} "
              f"{len(r['not_real']):>9}")
    for svc, r in res.items():
        if args.service and svc not in args.service:
            continue
        for kind in (("missing", "not_real") if args.missing_only else ("served", "missing", "not_real")):
            for item in r[kind]:
                print(f"  {svc:9} {kind:8} {item}")
    return 1 if any(r["missing"] for r in res.values()) else 0


if __name__ == "__main__":
    sys.exit(main())
