//! `deploy/template.yaml` grants each function only what it needs and closes the template's
//! holes (issue 18, item 7): one role per function, the webhook secret in Secrets Manager,
//! a TLS-only bucket policy, a lifecycle rule for the working state, API throttling, and the
//! path id kept out of the execution input's JSON unless it is a plain id. Reads the template
//! as text (its `!Ref`/`!Sub` tags are CloudFormation's); `scripts/lint-deploy.sh` runs
//! cfn-lint on it.

use std::path::PathBuf;

fn template() -> String {
    std::fs::read_to_string(PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("deploy/template.yaml"))
        .unwrap()
}

/// The lines of top-level resource (or parameter) `name`, up to the next one.
fn block<'a>(tpl: &'a str, name: &str) -> &'a str {
    let head = format!("\n  {name}:\n");
    let start = tpl.find(&head).unwrap_or_else(|| panic!("{name} missing")) + 1;
    let rest = &tpl[start + head.len() - 1..];
    let end = rest
        .match_indices('\n')
        .map(|(i, _)| i + 1)
        .find(|&i| {
            let line = &rest[i..];
            line.starts_with("  ") && !line.starts_with("   ") || !line.starts_with(' ')
        })
        .unwrap_or(rest.len());
    &tpl[start..start + head.len() - 1 + end]
}

const FUNCTIONS: [(&str, &str); 5] = [
    ("InitFunction", "InitRole"),
    ("ScrapeFunction", "ScrapeRole"),
    ("PlanFunction", "PlanRole"),
    ("FinaliseFunction", "FinaliseRole"),
    ("MarkFailedFunction", "MarkFailedRole"),
];

#[test]
fn each_function_has_its_own_least_privilege_role() {
    let tpl = template();
    assert!(!tpl.contains("WorkerRole"), "the shared role is gone");
    for (function, role) in FUNCTIONS {
        assert!(
            block(&tpl, function).contains(&format!("Role: !GetAtt {role}.Arn")),
            "{function} runs as {role}"
        );
        let r = block(&tpl, role);
        assert!(r.contains("Type: AWS::IAM::Role"), "{role}");
        // No handler deletes objects or items, scans a table or reads the assistant index.
        for never in [
            "s3:DeleteObject",
            "dynamodb:DeleteItem",
            "dynamodb:Scan",
            "/index/",
            "s3:*",
            "dynamodb:*",
            "Resource: \"*\"",
        ] {
            assert!(!r.contains(never), "{role} grants {never}");
        }
        // Objects only under the sink's prefix, listing only of that prefix.
        if r.contains("s3:GetObject") {
            assert!(
                r.contains("Resource: !Sub ${DocumentsBucket.Arn}/kb/*"),
                "{role}"
            );
            assert!(r.contains("\"s3:prefix\": \"kb/*\""), "{role}");
        }
    }
    // The scrape worker (untrusted pages, Chromium) reads its job and claims URLs and host
    // slots; nothing else.
    let scrape = block(&tpl, "ScrapeRole");
    for never in ["BatchWriteItem", "secretsmanager", "ConditionCheckItem"] {
        assert!(!scrape.contains(never), "ScrapeRole grants {never}");
    }
    assert!(scrape
        .contains("Action: dynamodb:GetItem\n                Resource: !GetAtt JobsTable.Arn"));
    // Mark-failed only updates job records.
    let mark = block(&tpl, "MarkFailedRole");
    assert!(
        !mark.contains("s3:") && !mark.contains("DedupTable"),
        "{mark}"
    );
}

#[test]
fn the_webhook_secret_is_in_secrets_manager_readable_by_finalise_only() {
    let tpl = template();
    assert!(
        !tpl.contains("KB_CRAWL_WEBHOOK_SECRET:"),
        "no plain secret in the environment"
    );
    assert!(
        !tpl.contains("NoEcho"),
        "no secret value passes through the stack"
    );
    assert!(block(&tpl, "FinaliseFunction")
        .contains("KB_CRAWL_WEBHOOK_SECRET_ARN: !Ref WebhookSecretArn"));
    for (_, role) in FUNCTIONS {
        let grants = block(&tpl, role).contains("secretsmanager:GetSecretValue");
        assert_eq!(grants, role == "FinaliseRole", "{role}");
    }
    assert!(block(&tpl, "FinaliseRole").contains("Resource: !Ref WebhookSecretArn"));
}

#[test]
fn the_bucket_takes_tls_only_and_expires_the_working_state() {
    let tpl = template();
    let policy = block(&tpl, "DocumentsBucketPolicy");
    assert!(policy.contains("Effect: Deny"), "{policy}");
    assert!(policy.contains("Condition: { Bool: { \"aws:SecureTransport\": \"false\" } }"));
    assert!(
        policy.contains("- !GetAtt DocumentsBucket.Arn")
            && policy.contains("${DocumentsBucket.Arn}/*")
    );
    let bucket = block(&tpl, "DocumentsBucket");
    assert!(bucket.contains("LifecycleConfiguration:"), "{bucket}");
    assert!(bucket.contains("- { Key: kb-crawl, Value: working-state }"));
    assert!(bucket.contains("ExpirationInDays: !Ref WorkingStateDays"));
    // The tag is the one the S3 sink puts on the working state.
    let s3 =
        std::fs::read_to_string(PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("src/s3/mod.rs"))
            .unwrap();
    assert!(s3.contains("WORKING_STATE_TAG: &str = \"kb-crawl=working-state\""));
}

#[test]
fn the_api_is_throttled_and_validates_its_body() {
    let tpl = template();
    let stage = block(&tpl, "ApiStage");
    assert!(
        stage.contains("ThrottlingRateLimit: !Ref ApiRateLimit"),
        "{stage}"
    );
    assert!(
        stage.contains("ThrottlingBurstLimit: !Ref ApiBurstLimit"),
        "{stage}"
    );
    assert!(stage.contains("ResourcePath: \"/*\""));
    let model = block(&tpl, "StartCrawlModel");
    assert!(model.contains("additionalProperties: false"), "{model}");
    let post = block(&tpl, "CrawlPost");
    assert!(post.contains("RequestValidatorId: !Ref BodyValidator"));
    assert!(post.contains("PassthroughBehavior: NEVER"));
}

#[test]
fn the_path_id_cannot_inject_keys_into_the_execution_input() {
    let tpl = template();
    let post = block(&tpl, "CrawlPost");
    // The id is used only after it matched the API's id pattern...
    assert!(post.contains("#if(!$id.matches('[A-Za-z0-9._-]{1,128}'))#set($id = 'invalid id')#end"));
    assert!(post.contains("\\\"assistant_id\\\": \\\"$id\\\""), "{post}");
    // ...and never straight from the request (one escape is not enough inside a JSON string
    // that holds JSON: `"` became `\"`, which the input string decodes back to `"`).
    assert!(!post.contains("$util.escapeJavaScript($input.params('id'))"));
    assert_eq!(post.matches("$input.params(").count(), 1, "{post}");
}

#[test]
fn the_gateway_body_model_lists_every_start_crawl_field() {
    let tpl = template();
    let model = block(&tpl, "StartCrawlModel");
    let req = crawl_core::CrawlRequest::builder("https://a.test/")
        .include(["/**"])
        .exclude(["**/print/**"])
        .build()
        .unwrap();
    let body = serde_json::to_value(crawl_core::StartCrawl::from(&req)).unwrap();
    for field in body.as_object().unwrap().keys() {
        assert!(
            model.contains(&format!("          {field}: {{")),
            "the gateway would refuse StartCrawl's field {field}: {model}"
        );
    }
}
