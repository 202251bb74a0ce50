#!/usr/bin/env python3
"""Fills the e2e manifests' Traefik placeholders from the preset users install (values/traefik.yaml),
so the e2e's Traefik runs the preset's configuration instead of a copy written beside it:
  BENCH_TRAEFIK_METRICS_PORT        -> the preset's ports.metrics.port
  BENCH_TRAEFIK_VERSION             -> the preset's image.tag (the Traefik release the image is built from)
  - BENCH_TRAEFIK_PRESET_ARGUMENTS  -> one list item per argument: the preset's global settings and
                                       additionalArguments, in the preset's order
Usage: traefik-preset.py PRESET [MANIFEST|-]   (prints the manifest; ci/test/chart/test_repository.py checks parity)
"""
import json
import re
import sys

import yaml


def preset_arguments(traefik):
    args = []
    for key, value in (traefik.get("global") or {}).items():
        args.append(f"--global.{key}={str(value).lower()}")
    args.extend(traefik.get("additionalArguments") or [])
    return args


def fill(text, traefik):
    port = str(traefik["ports"]["metrics"]["port"])
    args = preset_arguments(traefik)

    def expand(match):
        indent = match.group(1)
        return "\n".join(f"{indent}- {json.dumps(a)}" for a in args)

    text = re.sub(r"^( *)- BENCH_TRAEFIK_PRESET_ARGUMENTS *$", expand, text, flags=re.M)
    return text.replace("BENCH_TRAEFIK_METRICS_PORT", port).replace("BENCH_TRAEFIK_VERSION", str(traefik["image"]["tag"]))


def main():
    traefik = yaml.safe_load(open(sys.argv[1]))["traefik"]
    source = sys.stdin if len(sys.argv) < 3 or sys.argv[2] == "-" else open(sys.argv[2])
    sys.stdout.write(fill(source.read(), traefik))


if __name__ == "__main__":
    main()
