"""What a body attack costs the runner's memory: a sandboxed command opens N connections to the
services (env0's ports, through the sandbox's forwarder) and posts on each, several times, a JSON body of ~MB made of
`{}` (Gmail's messages.send, under Google's 10 MiB cap), then Slack's chat.postMessage with a `blocks` nested 5,000
deep and one with 600,000 empty arrays. A thread of the runner samples its resident memory (VmRSS) every 2 ms.

    .venv/bin/python bench/body_attack_memory.py [--connections 32] [--mb 8] [--rounds 3]

Prints the runner's idle RSS (sandbox up, services answered once), its peak during the attack, the difference,
the answers by status, and the seconds the attack took. Before the parse limits one 4 MB body cost ~0.5 GiB:
run a baseline with a small --connections/--mb on a shared machine.
"""

from __future__ import annotations

import argparse
import gc
import os
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from env0_posttrain.tasks.env0.serve.listeners import env0_sandbox  # noqa: E402
from env0_posttrain.workspace.environment import Workspace  # noqa: E402

ATTACK = r"""
import http.client, json, sys, threading
conns, mb, rounds = int(sys.argv[1]), float(sys.argv[2]), int(sys.argv[3])
empties = b"[" + b"{}," * int(mb * (1 << 20) / 3) + b"{}]"
gmail = b'{"raw": "eA", "payload": ' + empties + b"}"
deep = b'{"channel": "C1", "text": "x", "blocks": ' + b"[" * 5000 + b"]" * 5000 + b"}"
wide = b'{"channel": "C1", "text": "x", "blocks": [' + b"[]," * 600000 + b"[]]}"
codes, lock = {}, threading.Lock()
def post(port, path, body):
    try:
        c = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
        c.request("POST", path, body, {"Content-Type": "application/json"})
        r = c.getresponse()
        key = f"{r.status} {r.read()[:60].decode('utf-8', 'replace')}"
        c.close()
    except OSError as e:
        key = type(e).__name__
    with lock:
        codes[key] = codes.get(key, 0) + 1
def one(i):
    for _ in range(rounds):
        post(9001, "/gmail/v1/users/me/messages/send", gmail)
    post(9002, "/api/chat.postMessage", deep if i % 2 else wide)
threads = [threading.Thread(target=one, args=(i,)) for i in range(conns)]
[t.start() for t in threads]
[t.join() for t in threads]
print(json.dumps(codes, sort_keys=True))
"""


def rss_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--connections", type=int, default=32)
    ap.add_argument("--mb", type=float, default=8.0)
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    ws = Workspace.seeded(0)
    with env0_sandbox(ws) as sb:
        sb.run(["curl", "-s", "http://localhost:9001/health"], timeout=10, output_cap=1000)
        gc.collect()
        time.sleep(0.5)
        idle, peak, done = rss_mb(), [0.0], threading.Event()

        def sample() -> None:
            while not done.is_set():
                peak[0] = max(peak[0], rss_mb())
                time.sleep(0.002)

        sampler = threading.Thread(target=sample, daemon=True)
        sampler.start()
        t0 = time.perf_counter()
        res = sb.run(["python3", "-c", ATTACK, str(args.connections), str(args.mb), str(args.rounds)], timeout=600,
                     output_cap=1 << 16)
        took = time.perf_counter() - t0
        done.set()
        sampler.join()
        after = sb.run(["curl", "-s", "http://localhost:9001/health"], timeout=10, output_cap=1000)
    print(f"# {os.cpu_count()} cores, load average {os.getloadavg()[0]:.2f}; {args.connections} connections x "
          f"{args.rounds} bodies of {args.mb} MB of {{}}, then Slack blocks 5,000 deep / 600,000 wide")
    print(f"runner RSS idle {idle:.0f} MB, peak during the attack {peak[0]:.0f} MB, difference {peak[0] - idle:.0f} MB; "
          f"attack {took:.1f} s, rc {res.returncode}")
    print("answers:", res.stdout.strip()[-2000:], res.stderr.strip()[-500:])
    print("next request:", after.stdout.strip())
    return 0


if __name__ == "__main__":
    sys.exit(main())
