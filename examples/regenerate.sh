#!/usr/bin/env bash
# Regenerate the committed example graphs with the exporter CLI.
#
#   examples/regenerate.sh          rewrite examples/*.json in place
#   examples/regenerate.sh --check  export into a temp dir and fail (exit 1)
#                                   if any committed file differs
#
# Output is deterministic (no timestamps, sorted operator table), so a run on
# the same torch/transformers versions reproduces the files byte for byte.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(dirname "$here")"
export PYTHONPATH="$root/python${PYTHONPATH:+:$PYTHONPATH}"
py="${PYTHON:-python3}"

out="$here"
if [[ "${1:-}" == "--check" ]]; then
  out="$(mktemp -d)"
  trap 'rm -rf "$out"' EXIT
fi

export_one() {
  local file="$1"; shift
  "$py" -m joint_mlir.export --no-progress "$@" -o "$out/$file" >/dev/null
}

tiny=(--layers 2 --hidden 64 --heads 4 --kv-heads 2 --intermediate 128 --vocab 256 --batch 2 --seq 16)
export_one llama-tiny-fp32.json --model llama "${tiny[@]}" --dtype fp32
export_one llama-tiny-bf16.json --model llama "${tiny[@]}" --dtype bf16
export_one gpt2-tiny.json --model gpt2 --layers 2 --hidden 64 --heads 4 --intermediate 256 --vocab 256 --batch 2 --seq 16
export_one mlp.json --model mlp --layers 2 --hidden 32 --intermediate 64 --vocab 16 --batch 4 --seq 8
# Real dimensions (llama3-8b, 2 of its 32 blocks, bf16, 2k tokens) for
# scripts/demo: its numbers are the GiB a user sees. Kept in real/ because the
# torch tests materialize every top-level example.
mkdir -p "$out/real"
export_one real/llama3-8b-2layers-bf16.json --model llama --preset llama3-8b --layers 2 --batch 1 --seq 2048 --dtype bf16
export_one mlp-dynamic-seq.json --model mlp --layers 2 --hidden 32 --intermediate 64 --vocab 16 --batch 4 --seq 8 --dynamic-seq

if [[ "$out" != "$here" ]]; then
  status=0
  for f in "$out"/*.json "$out"/real/*.json; do
    name="${f#"$out"/}"
    if ! cmp -s "$f" "$here/$name"; then
      echo "examples/$name differs from a fresh export" >&2
      status=1
    fi
  done
  [[ $status == 0 ]] && echo "examples up to date"
  exit $status
fi
