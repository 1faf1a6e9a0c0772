import * as fs from 'fs';
import * as path from 'path';

import { App, Aspects, Stack } from 'aws-cdk-lib';
import { Annotations, Match, Template } from 'aws-cdk-lib/assertions';
import * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import * as s3 from 'aws-cdk-lib/aws-s3';
import * as secretsmanager from 'aws-cdk-lib/aws-secretsmanager';
import { AwsSolutionsChecks } from 'cdk-nag';

import { ASL_PATH, KbCrawl, KbCrawlProps } from '../lib';
import { KbCrawlTemplateStack } from '../lib/template-stack';

const DEPLOY = path.join(__dirname, '..', '..', 'deploy');
const JWT = { issuer: 'https://cognito-idp.us-east-1.amazonaws.com/us-east-1_Example', audience: ['client-1'] };

/** A host's stack with the construct in it. */
function host(props: Partial<KbCrawlProps> = {}, build?: (s: Stack) => Partial<KbCrawlProps>) {
  const app = new App();
  const stack = new Stack(app, 'Platform', { env: { account: '123456789012', region: 'us-east-1' } });
  const extra = build ? build(stack) : {};
  const crawl = new KbCrawl(stack, 'Crawl', {
    code: lambda.Code.fromBucket(s3.Bucket.fromBucketName(stack, 'Code', 'code-bucket'), 'kb-crawl-lambda.zip'),
    jwt: JWT,
    ...props,
    ...extra,
  });
  // Synthesized on first use, so a test may still add to the stack.
  return { app, stack, crawl, get template() { return Template.fromStack(stack); } };
}

type Statement = { Action: string | string[]; Resource: unknown; Condition?: unknown };

/** Every statement of the policies attached to the role of the function with `handler`. */
function statementsOf(template: Template, handler: string): Statement[] {
  const fns = template.findResources('AWS::Lambda::Function', {
    Properties: { Environment: { Variables: { KB_CRAWL_HANDLER: handler } } },
  });
  const [fn] = Object.values(fns);
  const role = fn.Properties.Role['Fn::GetAtt'][0];
  const policies = template.findResources('AWS::IAM::Policy', { Properties: { Roles: Match.arrayWith([{ Ref: role }]) } });
  return Object.values(policies).flatMap((p) => p.Properties.PolicyDocument.Statement);
}

const list = (a: string | string[]) => (Array.isArray(a) ? a : [a]);

describe('deploy/template.yaml', () => {
  test('is the synthesized template stack (npm run synth rewrites it)', () => {
    const app = new App();
    const stack = new KbCrawlTemplateStack(app, 'KbCrawl');
    const synthesized = JSON.stringify(Template.fromStack(stack).toJSON(), null, 1);
    const checkedIn = fs.readFileSync(path.join(DEPLOY, 'template.yaml'), 'utf8').trimEnd();
    expect(JSON.parse(checkedIn)).toEqual(JSON.parse(synthesized));
  });

  test('embeds the state machine crawl_aws::sfn generates (deploy/state-machine.asl.json)', () => {
    expect(JSON.parse(fs.readFileSync(ASL_PATH, 'utf8')))
      .toEqual(JSON.parse(fs.readFileSync(path.join(DEPLOY, 'state-machine.asl.json'), 'utf8')));
  });
});

describe('cdk-nag AwsSolutions', () => {
  test.each([
    ['the template stack', () => { const app = new App(); return { app, stack: new KbCrawlTemplateStack(app, 'KbCrawl') }; }],
    ['a host stack with a webhook and an existing bucket', () => {
      const app = new App();
      const stack = new Stack(app, 'Platform');
      new KbCrawl(stack, 'Crawl', {
        code: lambda.Code.fromBucket(s3.Bucket.fromBucketName(stack, 'Code', 'code-bucket'), 'k.zip'),
        jwt: JWT,
        bucket: s3.Bucket.fromBucketName(stack, 'Docs', 'host-documents'),
        webhook: { url: 'https://ingest.example.edu/hook', secret: secretsmanager.Secret.fromSecretNameV2(stack, 'Key', 'kb-hook') },
        allowedOrigins: ['https://boisestate.ai'],
      });
      return { app, stack };
    }],
  ])('passes on %s, every suppression with a reason', (_name, make) => {
    const { app, stack } = make();
    Aspects.of(app).add(new AwsSolutionsChecks());
    app.synth();
    const errors = Annotations.fromStack(stack).findError('*', Match.stringLikeRegexp('AwsSolutions-.*'));
    const warnings = Annotations.fromStack(stack).findWarning('*', Match.stringLikeRegexp('AwsSolutions-.*'));
    expect(errors.map((e) => `${e.id}: ${e.entry.data}`)).toEqual([]);
    expect(warnings.map((e) => `${e.id}: ${e.entry.data}`)).toEqual([]);
    const template = Template.fromStack(stack).toJSON();
    for (const r of Object.values<any>(template.Resources)) {
      for (const s of r.Metadata?.cdk_nag?.rules_to_suppress ?? []) {
        expect(s.reason.length).toBeGreaterThan(20);
      }
    }
  });
});

describe('KbCrawl', () => {
  test('the state machine role may start its own map runs and describe and stop their Standard and Express children, nothing wider', () => {
    // What a Distributed Map needs on the parent's role (Step Functions' "IAM policies for
    // using Distributed Map states", and aws-cdk-lib's own DistributedMap policy):
    // states:StartExecution on the state machine, states:DescribeExecution and
    // states:StopExecution on its executions; the batches run as EXPRESS children, whose
    // ARNs are `express:` ones.
    const { template } = host({ stateMachineName: 'crawl-sm' });
    const [machine] = Object.values(template.findResources('AWS::StepFunctions::StateMachine')) as any[];
    const roleId = machine.Properties.RoleArn['Fn::GetAtt'][0];
    const statements = Object.values(template.findResources('AWS::IAM::Policy'))
      .filter((p: any) => JSON.stringify(p.Properties.Roles).includes(roleId))
      .flatMap((p: any) => p.Properties.PolicyDocument.Statement);
    const states = statements.filter((s: any) => [s.Action].flat().some((a: string) => a.startsWith('states:')));
    const arn = (r: any): string => (typeof r === 'string' ? r
      : r['Fn::Join'] ? r['Fn::Join'][1].map(arn).join(r['Fn::Join'][0])
        : r.Ref ? `\${${r.Ref}}` : JSON.stringify(r));
    const sm = 'arn:${AWS::Partition}:states:us-east-1:123456789012';
    expect(states.map((s: any) => [[s.Action].flat().sort(), [s.Resource].flat().map(arn).sort()])).toEqual([
      [['states:StartExecution'], [`${sm}:stateMachine:crawl-sm`]],
      [['states:DescribeExecution', 'states:StopExecution'], [`${sm}:execution:crawl-sm:*`, `${sm}:express:crawl-sm:*`]],
    ]);
  });

  test('creates the workflow, six functions, four tables, a bucket, the schedule group and the HTTP API with twelve JWT routes', () => {
    const { template } = host();
    template.resourceCountIs('AWS::StepFunctions::StateMachine', 1);
    template.resourceCountIs('AWS::Lambda::Function', 6);
    template.resourceCountIs('AWS::DynamoDB::Table', 4);
    template.resourceCountIs('AWS::Scheduler::ScheduleGroup', 1);
    template.resourceCountIs('AWS::S3::Bucket', 1);
    template.resourceCountIs('AWS::ApiGatewayV2::Api', 1);
    template.resourceCountIs('AWS::ApiGatewayV2::Route', 12);
    template.hasResourceProperties('AWS::ApiGatewayV2::Authorizer', {
      AuthorizerType: 'JWT',
      JwtConfiguration: { Issuer: JWT.issuer, Audience: JWT.audience },
    });
    for (const key of ['POST /assistants/{assistant_id}/crawl', 'GET /assistants/{assistant_id}/crawl/{crawl_job_id}',
      'DELETE /assistants/{assistant_id}/crawl/{crawl_job_id}', 'GET /assistants/{assistant_id}/crawls',
      'POST /assistants/{assistant_id}/sources', 'PATCH /assistants/{assistant_id}/sources/{source_id}',
      'POST /assistants/{assistant_id}/sources/{source_id}/sync']) {
      template.hasResourceProperties('AWS::ApiGatewayV2::Route', { RouteKey: key, AuthorizationType: 'JWT' });
    }
    template.hasResourceProperties('AWS::DynamoDB::Table', {
      GlobalSecondaryIndexes: [Match.objectLike({ IndexName: 'assistant-index' })],
    });
    template.hasResourceProperties('AWS::DynamoDB::Table', {
      GlobalSecondaryIndexes: [Match.objectLike({ IndexName: 'tenant-index' })],
    });
  });

  test('the scheduler role may only start this state machine, and the API may only pass it to EventBridge Scheduler', () => {
    const { template } = host();
    const roles = template.findResources('AWS::IAM::Role', {
      Properties: { AssumeRolePolicyDocument: { Statement: [Match.objectLike({ Principal: { Service: 'scheduler.amazonaws.com' } })] } },
    });
    expect(Object.keys(roles)).toHaveLength(1);
    const [roleId] = Object.keys(roles);
    const policies = Object.values(template.findResources('AWS::IAM::Policy')).filter(
      (p: any) => JSON.stringify(p.Properties.Roles).includes(roleId));
    const statements = policies.flatMap((p: any) => p.Properties.PolicyDocument.Statement);
    expect(statements).toHaveLength(1);
    expect(statements[0].Action).toBe('states:StartExecution');
    const all = Object.values(template.findResources('AWS::IAM::Policy'))
      .flatMap((p: any) => p.Properties.PolicyDocument.Statement);
    const pass = all.filter((s: any) => s.Action === 'iam:PassRole');
    expect(pass).toHaveLength(1);
    expect(pass[0].Condition).toEqual({ StringEquals: { 'iam:PassedToService': 'scheduler.amazonaws.com' } });
    const sched = all.filter((s: any) => JSON.stringify(s.Action).includes('scheduler:'));
    expect(sched).toHaveLength(1);
    expect(JSON.stringify(sched[0].Resource)).toContain('-src/*');
  });

  test('the Distributed Map concurrency and the scrape reserved concurrency follow maxConcurrency', () => {
    const { template } = host({ maxConcurrency: 20 });
    const [sm] = Object.values(template.findResources('AWS::StepFunctions::StateMachine'));
    const def = JSON.parse(sm.Properties.DefinitionString);
    expect(def.States.ScrapeLevel.ItemProcessor.ProcessorConfig.Mode).toBe('DISTRIBUTED');
    expect(def.States.ScrapeLevel.MaxConcurrency).toBe(20);
    // Batches of pages, each one Express child: 120 s / (20 / 2 + 5) s a page.
    expect(def.States.ScrapeLevel.ItemProcessor.ProcessorConfig.ExecutionType).toBe('EXPRESS');
    expect(def.States.ScrapeLevel.ItemBatcher.MaxItemsPerBatch).toBe(8);
    template.hasResourceProperties('AWS::Lambda::Function', {
      Environment: { Variables: { KB_CRAWL_HANDLER: 'scrape' } },
      ReservedConcurrentExecutions: 20,
    });
  });

  test('page caps and the crawl policy reach init and the API', () => {
    const { template } = host({ maxPages: 200, maxDepth: 3, crawlPolicy: '{"rate":1}' });
    for (const handler of ['init', 'api']) {
      template.hasResourceProperties('AWS::Lambda::Function', {
        Environment: { Variables: { KB_CRAWL_HANDLER: handler, KB_CRAWL_GUARDRAILS: '{"maxPages":200,"maxDepth":3}', KB_CRAWL_POLICY: '{"rate":1}' } },
      });
    }
  });

  test('takes the host\'s bucket and assistants table, and grants only under the prefix', () => {
    const { template } = host({ prefix: 'crawls' }, (s) => ({
      bucket: s3.Bucket.fromBucketName(s, 'Docs', 'host-documents'),
      assistantsTable: dynamodb.Table.fromTableName(s, 'Assistants', 'host-assistants'),
    }));
    template.resourceCountIs('AWS::S3::Bucket', 0);
    template.resourceCountIs('AWS::DynamoDB::Table', 3);
    template.hasResourceProperties('AWS::Lambda::Function', {
      Environment: { Variables: { KB_CRAWL_HANDLER: 'api', KB_CRAWL_S3_BUCKET: 'host-documents', KB_CRAWL_S3_PREFIX: 'crawls', KB_CRAWL_ASSISTANTS_TABLE: 'host-assistants' } },
    });
    const api = statementsOf(template, 'api');
    const assistants = api.filter((s) => JSON.stringify(s.Resource).includes('table/host-assistants'));
    expect(assistants.map((s) => s.Action)).toEqual(['dynamodb:GetItem']);
    for (const handler of ['init', 'scrape', 'plan', 'finalise', 'api']) {
      for (const s of statementsOf(template, handler)) {
        const text = JSON.stringify(s.Resource);
        if (list(s.Action).some((a) => a.startsWith('s3:') && a !== 's3:ListBucket')) {
          expect(text).toContain('host-documents/crawls/*');
        }
        if (list(s.Action).includes('s3:ListBucket')) {
          expect(s.Condition).toEqual({ StringLike: { 's3:prefix': 'crawls/*' } });
        }
      }
    }
  });

  test.each(['init', 'scrape', 'plan', 'finalise', 'mark-failed', 'api'])('%s: no wildcard action, no "*" resource, no delete but the API\'s', (handler) => {
    const { template } = host();
    for (const s of statementsOf(template, handler)) {
      for (const a of list(s.Action)) {
        expect(a).not.toMatch(/(^\*$|:\*$)/);
        if (handler !== 'api') {
          expect(['s3:DeleteObject', 'dynamodb:DeleteItem', 'dynamodb:Scan']).not.toContain(a);
        }
      }
      expect(s.Resource).not.toEqual('*');
      if (handler !== 'api') {
        expect(JSON.stringify(s.Resource)).not.toContain('/index/');
      }
    }
  });

  test('scrape reads its job, claims URLs and reads and saves its pages\' state, nothing else', () => {
    const { template } = host();
    const actions = statementsOf(template, 'scrape').flatMap((s) => list(s.Action)).sort();
    expect(actions).toEqual(['dynamodb:BatchWriteItem', 'dynamodb:GetItem', 'dynamodb:GetItem', 'dynamodb:GetItem', 'dynamodb:PutItem', 'dynamodb:UpdateItem',
      's3:GetObject', 's3:ListBucket', 's3:PutObject', 's3:PutObjectTagging'].sort());
  });

  test('the state machine role: "*" only for log delivery and X-Ray, which accept nothing narrower', () => {
    const { template } = host();
    const [sm] = Object.values(template.findResources('AWS::StepFunctions::StateMachine'));
    const role = sm.Properties.RoleArn['Fn::GetAtt'][0];
    const policies = template.findResources('AWS::IAM::Policy', { Properties: { Roles: [{ Ref: role }] } });
    const statements: Statement[] = Object.values(policies).flatMap((p) => p.Properties.PolicyDocument.Statement);
    for (const s of statements) {
      if (s.Resource === '*') {
        for (const a of list(s.Action)) {
          expect(a).toMatch(/^(logs:(CreateLogDelivery|GetLogDelivery|UpdateLogDelivery|DeleteLogDelivery|ListLogDeliveries|PutResourcePolicy|DescribeResourcePolicies|DescribeLogGroups)|xray:(PutTraceSegments|PutTelemetryRecords|GetSamplingRules|GetSamplingTargets))$/);
        }
      }
    }
    const invoke = statements.filter((s) => list(s.Action).includes('lambda:InvokeFunction'));
    expect(invoke).toHaveLength(5);
  });

  test('the webhook key is readable by finalise and the API only', () => {
    const { template } = host({}, (s) => ({
      webhook: { url: 'https://ingest.example.edu/hook', secret: secretsmanager.Secret.fromSecretNameV2(s, 'Key', 'kb-hook') },
    }));
    for (const handler of ['init', 'scrape', 'plan', 'finalise', 'mark-failed', 'api']) {
      const reads = statementsOf(template, handler).some((s) => list(s.Action).includes('secretsmanager:GetSecretValue'));
      expect([handler, reads]).toEqual([handler, handler === 'finalise' || handler === 'api']);
    }
  });

  test('the API stage is throttled and logged', () => {
    const { template } = host({ apiRateLimit: 7, apiBurstLimit: 14 });
    template.hasResourceProperties('AWS::ApiGatewayV2::Stage', {
      StageName: '$default',
      DefaultRouteSettings: { ThrottlingRateLimit: 7, ThrottlingBurstLimit: 14 },
      AccessLogSettings: Match.objectLike({ DestinationArn: Match.anyValue() }),
    });
  });

  test('grantStartCrawl lets a host role start executions of this state machine only', () => {
    const { stack, crawl } = host();
    const role = new iam.Role(stack, 'HostApi', { assumedBy: new iam.ServicePrincipal('lambda.amazonaws.com') });
    crawl.grantStartCrawl(role);
    Template.fromStack(stack).hasResourceProperties('AWS::IAM::Policy', {
      Roles: [{ Ref: Match.stringLikeRegexp('HostApi') }],
      PolicyDocument: { Statement: [Match.objectLike({ Action: 'states:StartExecution', Resource: { Ref: Match.stringLikeRegexp('CrawlStateMachine') } })] },
    });
  });
});
