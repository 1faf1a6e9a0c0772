//! `deploy/template.yaml` (synthesized from the CDK construct in `crawl-aws/cdk`; `npm test`
//! there fails when the two differ) grants each function only what it needs and closes the
//! template's holes (issue 18 item 7, issue 14): one role per function, the webhook secret in
//! Secrets Manager, a TLS-only bucket policy, a lifecycle rule for the working state, API
//! throttling, every route behind the JWT authorizer and the router. The template is JSON
//! (which is YAML); `scripts/lint-deploy.sh` runs cfn-lint on it.

use std::collections::BTreeSet;
use std::path::PathBuf;

use serde_json::{json, Value};

fn template() -> Value {
    let text = std::fs::read_to_string(
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("deploy/template.yaml"),
    )
    .unwrap();
    serde_json::from_str(&text).expect("deploy/template.yaml is the synthesized JSON")
}

fn resources<'a>(tpl: &'a Value, ty: &'a str) -> impl Iterator<Item = (&'a String, &'a Value)> {
    tpl["Resources"]
        .as_object()
        .unwrap()
        .iter()
        .filter(move |(_, r)| r["Type"] == ty)
}

/// The function whose `KB_CRAWL_HANDLER` is `handler`.
fn function<'a>(tpl: &'a Value, handler: &str) -> &'a Value {
    resources(tpl, "AWS::Lambda::Function")
        .map(|(_, r)| r)
        .find(|r| r["Properties"]["Environment"]["Variables"]["KB_CRAWL_HANDLER"] == handler)
        .unwrap_or_else(|| panic!("no {handler} function"))
}

/// The logical id of the role `f` runs as.
fn role_of(f: &Value) -> String {
    f["Properties"]["Role"]["Fn::GetAtt"][0]
        .as_str()
        .unwrap()
        .to_owned()
}

/// Every statement of every policy attached to `role`.
fn statements(tpl: &Value, role: &str) -> Vec<Value> {
    resources(tpl, "AWS::IAM::Policy")
        .filter(|(_, p)| {
            p["Properties"]["Roles"]
                .as_array()
                .unwrap()
                .contains(&json!({ "Ref": role }))
        })
        .flat_map(|(_, p)| {
            p["Properties"]["PolicyDocument"]["Statement"]
                .as_array()
                .unwrap()
                .clone()
        })
        .collect()
}

fn actions(s: &Value) -> Vec<String> {
    match &s["Action"] {
        Value::String(a) => vec![a.clone()],
        Value::Array(a) => a.iter().map(|v| v.as_str().unwrap().to_owned()).collect(),
        _ => vec![],
    }
}

const WORKERS: [&str; 5] = ["init", "scrape", "plan", "finalise", "mark-failed"];

#[test]
fn each_function_has_its_own_least_privilege_role() {
    let tpl = template();
    let roles: BTreeSet<String> = WORKERS
        .iter()
        .chain(&["api"])
        .map(|h| role_of(function(&tpl, h)))
        .collect();
    assert_eq!(roles.len(), 6, "one role per function: {roles:?}");
    let dedup = json!({"Fn::GetAtt": [resources(&tpl, "AWS::DynamoDB::Table").find(|(_, t)| t["Properties"]["TimeToLiveSpecification"].is_object() && t["Properties"]["KeySchema"].as_array().unwrap().len() == 2).unwrap().0, "Arn"]});
    for handler in WORKERS.iter().chain(&["api"]) {
        let role = role_of(function(&tpl, handler));
        let all = statements(&tpl, &role);
        assert!(!all.is_empty(), "{handler}");
        for s in &all {
            let text = s.to_string();
            // No wildcard action, no "*" resource, no handler but the API deletes or scans.
            for a in actions(s) {
                assert!(!a.ends_with(":*") && a != "*", "{handler} grants {a}");
                if *handler != "api" {
                    for never in ["s3:DeleteObject", "dynamodb:DeleteItem", "dynamodb:Scan"] {
                        assert_ne!(a, never, "{handler} grants {a}");
                    }
                }
            }
            assert_ne!(s["Resource"], "*", "{handler}: {text}");
            if *handler != "api" {
                assert!(
                    !text.contains("/index/"),
                    "{handler} reads an index: {text}"
                );
            }
            // Objects only under the sink's prefix, listing only of that prefix.
            if actions(s)
                .iter()
                .any(|a| a.starts_with("s3:") && a != "s3:ListBucket")
            {
                assert!(text.contains("\"/kb/*\""), "{handler}: {text}");
            }
            if actions(s).iter().any(|a| a == "s3:ListBucket") {
                assert_eq!(
                    s["Condition"],
                    json!({"StringLike": {"s3:prefix": "kb/*"}}),
                    "{handler}"
                );
            }
        }
    }
    // The scrape worker (untrusted pages, Chromium) reads its job and claims URLs and host
    // slots; nothing else.
    // It also reads and saves its pages' state in the sources table (GetItem, and
    // BatchWriteItem for a page's states), and nothing else there.
    let scrape = statements(&tpl, &role_of(function(&tpl, "scrape")));
    let (on_sources, scrape): (Vec<Value>, Vec<Value>) = scrape.into_iter().partition(|s| {
        serde_json::to_string(&s["Resource"])
            .unwrap()
            .contains("SourcesTable")
    });
    assert_eq!(on_sources.len(), 1, "{on_sources:?}");
    let mut granted = actions(&on_sources[0]);
    granted.sort();
    assert_eq!(granted, vec!["dynamodb:BatchWriteItem", "dynamodb:GetItem"]);
    let text = serde_json::to_string(&scrape).unwrap();
    for never in [
        "BatchWriteItem",
        "secretsmanager",
        "ConditionCheckItem",
        "states:",
    ] {
        assert!(!text.contains(never), "scrape grants {never}");
    }
    // Mark-failed only updates job records.
    let mark =
        serde_json::to_string(&statements(&tpl, &role_of(function(&tpl, "mark-failed")))).unwrap();
    assert!(
        !mark.contains("s3:")
            && !mark.contains(&dedup["Fn::GetAtt"][0].as_str().unwrap().to_string()),
        "{mark}"
    );
}

#[test]
fn the_webhook_secret_is_in_secrets_manager_readable_by_finalise_only() {
    // Finalise delivers completed jobs; the API's DELETE delivers `crawl.deleted`: those two.
    let tpl = template();
    let text = tpl.to_string();
    assert!(
        !text.contains("KB_CRAWL_WEBHOOK_SECRET\""),
        "no plain secret in the environment"
    );
    assert!(
        !text.contains("NoEcho"),
        "no secret value passes through the stack"
    );
    for handler in ["finalise", "api"] {
        assert_eq!(
            function(&tpl, handler)["Properties"]["Environment"]["Variables"]
                ["KB_CRAWL_WEBHOOK_SECRET_ARN"],
            json!({"Ref": "WebhookSecretArn"}),
            "{handler}"
        );
    }
    for handler in WORKERS.iter().chain(&["api"]) {
        let grants = statements(&tpl, &role_of(function(&tpl, handler)))
            .iter()
            .any(|s| actions(s).contains(&"secretsmanager:GetSecretValue".to_owned()));
        assert_eq!(grants, ["finalise", "api"].contains(handler), "{handler}");
    }
    let (_, policy) = resources(&tpl, "AWS::IAM::Policy")
        .find(|(_, p)| p.to_string().contains("secretsmanager:GetSecretValue"))
        .unwrap();
    assert_eq!(
        policy["Condition"], "HasWebhookSecret",
        "no secret, no grant"
    );
    assert_eq!(
        policy["Properties"]["PolicyDocument"]["Statement"][0]["Resource"],
        json!({"Ref": "WebhookSecretArn"})
    );
}

#[test]
fn the_bucket_takes_tls_only_and_expires_the_working_state() {
    let tpl = template();
    let (_, policy) = resources(&tpl, "AWS::S3::BucketPolicy").next().unwrap();
    let deny = &policy["Properties"]["PolicyDocument"]["Statement"][0];
    assert_eq!(deny["Effect"], "Deny");
    assert_eq!(
        deny["Condition"],
        json!({"Bool": {"aws:SecureTransport": "false"}})
    );
    assert_eq!(
        deny["Resource"].as_array().unwrap().len(),
        2,
        "the bucket and its objects"
    );
    let (_, bucket) = resources(&tpl, "AWS::S3::Bucket").next().unwrap();
    let rule = &bucket["Properties"]["LifecycleConfiguration"]["Rules"][0];
    assert_eq!(
        rule["TagFilters"],
        json!([{"Key": "kb-crawl", "Value": "working-state"}])
    );
    assert_eq!(rule["ExpirationInDays"], json!({"Ref": "WorkingStateDays"}));
    // The tag is the one the S3 sink puts on the working state.
    let s3 =
        std::fs::read_to_string(PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("src/s3/mod.rs"))
            .unwrap();
    assert!(s3.contains("WORKING_STATE_TAG: &str = \"kb-crawl=working-state\""));
}

#[test]
fn the_api_is_throttled_and_validates_its_body() {
    let tpl = template();
    let (_, stage) = resources(&tpl, "AWS::ApiGatewayV2::Stage").next().unwrap();
    let s = &stage["Properties"];
    assert_eq!(
        s["DefaultRouteSettings"]["ThrottlingRateLimit"],
        json!({"Ref": "ApiRateLimit"})
    );
    assert_eq!(
        s["DefaultRouteSettings"]["ThrottlingBurstLimit"],
        json!({"Ref": "ApiBurstLimit"})
    );
    assert!(s["AccessLogSettings"]["DestinationArn"].is_object(), "{s}");
    // HTTP APIs have no body models: every request reaches the router, which validates the
    // body as StartCrawl (unknown fields refused: crawl-aws/tests/lambda_api.rs).
    let (_, integration) = resources(&tpl, "AWS::ApiGatewayV2::Integration")
        .next()
        .unwrap();
    assert_eq!(integration["Properties"]["IntegrationType"], "AWS_PROXY");
    let api_fn = resources(&tpl, "AWS::Lambda::Function")
        .find(|(_, r)| r["Properties"]["Environment"]["Variables"]["KB_CRAWL_HANDLER"] == "api")
        .unwrap()
        .0;
    assert_eq!(
        integration["Properties"]["IntegrationUri"],
        json!({"Fn::GetAtt": [api_fn, "Arn"]})
    );
    assert_eq!(resources(&tpl, "AWS::ApiGatewayV2::Integration").count(), 1);
}

#[test]
fn the_path_id_cannot_inject_keys_into_the_execution_input() {
    // No mapping template builds the execution input any more: the API Lambda does, with
    // serde (StepFunctionsRunner), after the router checked the id's shape.
    let tpl = template();
    let text = tpl.to_string();
    assert!(
        !text.contains("RequestTemplates") && !text.contains("$input.params"),
        "no VTL"
    );
    assert_eq!(
        resources(&tpl, "AWS::ApiGateway::Method").count(),
        0,
        "no REST API"
    );
}

#[test]
fn every_route_of_the_router_is_on_the_http_api_behind_the_jwt_authorizer() {
    let tpl = template();
    let mut routes: Vec<String> = Vec::new();
    for (_, r) in resources(&tpl, "AWS::ApiGatewayV2::Route") {
        assert_eq!(r["Properties"]["AuthorizationType"], "JWT", "{r}");
        routes.push(r["Properties"]["RouteKey"].as_str().unwrap().to_owned());
    }
    routes.sort();
    let mut want: Vec<String> = crawl_api::ROUTES
        .iter()
        .map(|(m, p)| format!("{} {p}", m.to_ascii_uppercase()))
        .collect();
    want.sort();
    assert_eq!(routes, want);
    let (_, auth) = resources(&tpl, "AWS::ApiGatewayV2::Authorizer")
        .next()
        .unwrap();
    assert_eq!(auth["Properties"]["AuthorizerType"], "JWT");
    assert_eq!(
        auth["Properties"]["JwtConfiguration"]["Issuer"],
        json!({"Ref": "JwtIssuer"})
    );
    assert_eq!(
        auth["Properties"]["JwtConfiguration"]["Audience"],
        json!({"Ref": "JwtAudience"})
    );
}

#[test]
fn the_distributed_map_and_the_scrape_function_share_the_concurrency_cap() {
    let tpl = template();
    let (_, sm) = resources(&tpl, "AWS::StepFunctions::StateMachine")
        .next()
        .unwrap();
    let def: Value =
        serde_json::from_str(sm["Properties"]["DefinitionString"].as_str().unwrap()).unwrap();
    let map = &def["States"]["ScrapeLevel"];
    assert_eq!(
        map["ItemProcessor"]["ProcessorConfig"]["Mode"],
        "DISTRIBUTED"
    );
    assert_eq!(map["MaxConcurrency"], 50);
    assert_eq!(
        function(&tpl, "scrape")["Properties"]["ReservedConcurrentExecutions"],
        50
    );
}
