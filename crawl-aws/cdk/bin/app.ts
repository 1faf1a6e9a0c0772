#!/usr/bin/env node
// `npx cdk synth`: the stack of crawl-aws/deploy/template.yaml.
import { App } from 'aws-cdk-lib';
import { Aspects } from 'aws-cdk-lib';
import { AwsSolutionsChecks } from 'cdk-nag';

import { KbCrawlTemplateStack } from '../lib/template-stack';

const app = new App();
new KbCrawlTemplateStack(app, 'KbCrawl');
Aspects.of(app).add(new AwsSolutionsChecks({ verbose: true }));
app.synth();
