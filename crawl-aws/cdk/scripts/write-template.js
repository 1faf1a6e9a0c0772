// Copies the synthesized stack (cdk.out/KbCrawl.template.json, after `cdk synth`) to
// crawl-aws/deploy/template.yaml: JSON, which is YAML, so CloudFormation, cfn-lint and the
// Rust template tests (serde_json) all read the one file. `npm test` fails when they differ.
const fs = require('fs');
const path = require('path');
const src = path.join(__dirname, '..', 'cdk.out', 'KbCrawl.template.json');
const dst = path.join(__dirname, '..', '..', 'deploy', 'template.yaml');
fs.writeFileSync(dst, fs.readFileSync(src, 'utf8').trimEnd() + '\n');
console.error(`wrote ${dst}`);
