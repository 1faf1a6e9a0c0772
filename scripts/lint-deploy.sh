#!/usr/bin/env bash
# Lints the serverless deployment: cfn-lint on crawl-aws/deploy/template.yaml (synthesized by
# the CDK construct in crawl-aws/cdk; its npm test fails when the copy drifts) (from moto's
# venv, which moto[server] brings; see scripts/moto.sh) and asl-validator on the generated
# state machine crawl-aws/deploy/state-machine.asl.json (kept identical to the code by
# `cargo test -p crawl-aws --features aws-sfn --test it -- asl::`).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
DEPLOY="$ROOT/crawl-aws/deploy"
CFN_LINT="${CFN_LINT:-$ROOT/.venv/moto/bin/cfn-lint}"

[[ -x "$CFN_LINT" ]] || { echo "lint-deploy: cfn-lint missing ($CFN_LINT); run scripts/moto.sh start once" >&2; exit 1; }
echo "lint-deploy: cfn-lint template.yaml" >&2
# W3005 (a DependsOn that a GetAtt already implies): CDK adds it on every function's role,
# which is harmless; the template is synthesized (crawl-aws/cdk), not hand-written.
"$CFN_LINT" --ignore-checks W3005 -- "$DEPLOY/template.yaml"

command -v npx >/dev/null || { echo "lint-deploy: npx (Node.js) is required for asl-validator" >&2; exit 1; }
echo "lint-deploy: asl-validator state-machine.asl.json" >&2
npx --yes asl-validator@4.0.0 --json-path "$DEPLOY/state-machine.asl.json"
echo "lint-deploy: ok" >&2
