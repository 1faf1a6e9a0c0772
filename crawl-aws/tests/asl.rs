//! The generated state machine: checked-in copy, error names, and the shape rules that
//! interpreters enforce.

use std::collections::BTreeSet;
use std::path::PathBuf;

use crawl_aws::sfn::{
    state_machine, states, SfnOptions, ALL_ERRORS, ERR_INGEST_BUSY, FINALISE_RETRY_ERRORS,
    INGEST_LEASE_SECS, LAMBDA_SERVICE_ERRORS, MAX_CONCURRENCY, RETRYABLE_ERRORS,
};
use serde_json::Value;

fn checked_in() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("deploy/state-machine.asl.json")
}

/// Every object in the tree, with the key path that reached it.
fn walk<'a>(v: &'a Value, out: &mut Vec<&'a serde_json::Map<String, Value>>) {
    match v {
        Value::Object(m) => {
            out.push(m);
            m.values().for_each(|c| walk(c, out));
        }
        Value::Array(a) => a.iter().for_each(|c| walk(c, out)),
        _ => {}
    }
}

#[test]
fn checked_in_definition_matches_the_generated_one() {
    let generated =
        serde_json::to_string_pretty(&state_machine(&SfnOptions::default())).unwrap() + "\n";
    if std::env::var("KB_CRAWL_BLESS").as_deref() == Ok("1") {
        std::fs::write(checked_in(), &generated).unwrap();
    }
    let file = std::fs::read_to_string(checked_in()).unwrap_or_default();
    assert!(
        file == generated,
        "deploy/state-machine.asl.json is stale: regenerate with \
         KB_CRAWL_BLESS=1 cargo test -p crawl-aws --features aws-sfn --test it -- asl::"
    );
}

#[test]
fn error_equals_name_only_our_constants_and_every_retryable_one_is_retried() {
    let asl = state_machine(&SfnOptions::default());
    let mut objs = Vec::new();
    walk(&asl, &mut objs);
    let allowed: BTreeSet<&str> = ALL_ERRORS
        .iter()
        .chain(LAMBDA_SERVICE_ERRORS)
        .chain(FINALISE_RETRY_ERRORS)
        .copied()
        .chain(["States.ALL", "States.TaskFailed"])
        .collect();
    let mut retried = BTreeSet::new();
    let mut tasks = 0;
    for o in &objs {
        for key in ["Retry", "Catch"] {
            for rule in o.get(key).and_then(Value::as_array).into_iter().flatten() {
                for e in rule["ErrorEquals"].as_array().unwrap() {
                    let e = e.as_str().unwrap();
                    assert!(allowed.contains(e), "unknown error name {e}");
                    if key == "Retry" {
                        assert!(rule["BackoffRate"].as_f64().unwrap() > 1.0);
                        assert!(rule["MaxDelaySeconds"].as_u64().is_some());
                        assert_eq!(rule["JitterStrategy"], "FULL");
                        retried.insert(e);
                    }
                }
            }
        }
        if o.get("Type").and_then(Value::as_str) == Some("Task") {
            tasks += 1;
            let r: BTreeSet<&str> = o["Retry"]
                .as_array()
                .unwrap()
                .iter()
                .flat_map(|r| r["ErrorEquals"].as_array().unwrap())
                .filter_map(Value::as_str)
                .collect();
            for e in RETRYABLE_ERRORS {
                assert!(r.contains(e), "a task does not retry {e}");
            }
        }
    }
    assert_eq!(tasks, 5, "init, scrape, plan, finalise, mark-failed");
    for e in RETRYABLE_ERRORS {
        assert!(retried.contains(e));
    }
}

/// A finalise run that died holding the ingestion lease is retried until the lease has
/// ended: the expected wait of Finalise's retries (full jitter: half of each delay) outlasts
/// the lease, and no other task retries these errors.
#[test]
fn finalise_retries_a_held_hand_off_past_the_lease() {
    let asl = state_machine(&SfnOptions::default());
    let rules = asl["States"][states::FINALISE]["Retry"].as_array().unwrap();
    let rule = rules
        .iter()
        .find(|r| {
            r["ErrorEquals"]
                .as_array()
                .unwrap()
                .iter()
                .any(|e| e == ERR_INGEST_BUSY)
        })
        .expect("Finalise retries KbCrawl.IngestBusy");
    for e in FINALISE_RETRY_ERRORS {
        assert!(
            rule["ErrorEquals"]
                .as_array()
                .unwrap()
                .iter()
                .any(|x| x == e),
            "{e}"
        );
    }
    let interval = rule["IntervalSeconds"].as_f64().unwrap();
    let rate = rule["BackoffRate"].as_f64().unwrap();
    let cap = rule["MaxDelaySeconds"].as_f64().unwrap();
    let attempts = rule["MaxAttempts"].as_u64().unwrap();
    let expected: f64 = (0..attempts)
        .map(|k| (interval * rate.powi(i32::try_from(k).unwrap())).min(cap) / 2.0)
        .sum();
    assert!(
        expected > 1.5 * INGEST_LEASE_SECS as f64,
        "expected retry wait {expected:.0} s vs lease {INGEST_LEASE_SECS} s"
    );
    for name in [states::INIT, states::PLAN, states::MARK_FAILED] {
        let text = asl["States"][name]["Retry"].to_string();
        assert!(
            !text.contains(ERR_INGEST_BUSY),
            "{name} retries {ERR_INGEST_BUSY}"
        );
    }
}

#[test]
fn shape_distributed_map_from_s3_choice_without_wildcards_and_catches() {
    let opts = SfnOptions::default().with_max_concurrency(500);
    let asl = state_machine(&opts);
    let st = &asl["States"];
    let map = &st[states::SCRAPE_LEVEL];
    assert_eq!(map["Type"], "Map");
    assert_eq!(
        map["ItemReader"]["Resource"],
        "arn:aws:states:::s3:getObject"
    );
    assert_eq!(map["ItemReader"]["ReaderConfig"]["InputType"], "JSON");
    assert_eq!(
        map["ItemProcessor"]["ProcessorConfig"]["Mode"],
        "DISTRIBUTED"
    );
    assert_eq!(
        map["ItemProcessor"]["ProcessorConfig"]["ExecutionType"],
        "EXPRESS"
    );
    assert_eq!(map["MaxConcurrency"], MAX_CONCURRENCY);
    // Batches sized for the concurrency: 50 workers on one host at 2 requests/s wait 25 s
    // a page, plus 5 s of work, so 4 pages fit the planned 120 s.
    assert_eq!(map["ItemBatcher"]["MaxItemsPerBatch"], 4);
    assert_eq!(crawl_aws::sfn::batch_size_for(2), 20);
    assert_eq!(crawl_aws::sfn::batch_size_for(20), 8);
    assert_eq!(crawl_aws::sfn::batch_size_for(1), 21);
    assert!(map["ToleratedFailureCount"].as_u64().unwrap() > 0);
    assert_eq!(
        map["ResultPath"],
        Value::Null,
        "results stay out of the 256 KiB payload"
    );
    let choice = &st[states::HAS_NEXT];
    assert_eq!(choice["Choices"][0]["BooleanEquals"], true);
    let text = asl.to_string();
    assert!(!text.contains("[*]"), "no wildcard paths");
    // Every state but the terminal ones and the choice catches into MarkFailed.
    for name in [
        states::INIT,
        states::SCRAPE_LEVEL,
        states::PLAN,
        states::FINALISE,
    ] {
        assert_eq!(st[name]["Catch"][0]["Next"], states::MARK_FAILED, "{name}");
    }
    // Every transition target exists.
    let names: BTreeSet<&str> = st.as_object().unwrap().keys().map(String::as_str).collect();
    let mut objs = Vec::new();
    walk(st, &mut objs);
    for o in objs {
        for k in ["Next", "Default"] {
            if let Some(t) = o.get(k).and_then(Value::as_str) {
                assert!(
                    names.contains(t) || t == states::SCRAPE_PAGE,
                    "dangling target {t}"
                );
            }
        }
    }
}

#[test]
fn the_cloudformation_template_embeds_the_same_definition() {
    // deploy/template.yaml is synthesized by crawl-aws/cdk (JSON), whose copy of the
    // definition (cdk/asl) is checked against deploy/state-machine.asl.json by its tests.
    let generated = state_machine(&SfnOptions::default());
    let tpl: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(
            PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("deploy/template.yaml"),
        )
        .unwrap(),
    )
    .unwrap();
    let sm = tpl["Resources"]
        .as_object()
        .unwrap()
        .values()
        .find(|r| r["Type"] == "AWS::StepFunctions::StateMachine")
        .expect("a state machine");
    let def: serde_json::Value =
        serde_json::from_str(sm["Properties"]["DefinitionString"].as_str().unwrap()).unwrap();
    // JavaScript writes 2.0 as 2: numbers compare by value.
    fn numbers_as_f64(v: &serde_json::Value) -> serde_json::Value {
        match v {
            serde_json::Value::Number(n) => serde_json::json!(n.as_f64()),
            serde_json::Value::Array(a) => a.iter().map(numbers_as_f64).collect(),
            serde_json::Value::Object(o) => o
                .iter()
                .map(|(k, v)| (k.clone(), numbers_as_f64(v)))
                .collect::<serde_json::Map<_, _>>()
                .into(),
            other => other.clone(),
        }
    }
    assert_eq!(
        numbers_as_f64(&def),
        numbers_as_f64(&generated),
        "deploy/template.yaml's definition differs from the generated state machine"
    );
    let compact = serde_json::to_string(&generated).unwrap();
    for sub in [
        "InitFunctionArn",
        "ScrapeFunctionArn",
        "PlanFunctionArn",
        "FinaliseFunctionArn",
        "MarkFailedFunctionArn",
    ] {
        assert!(compact.contains(&format!("${{{sub}}}")));
        assert!(
            sm["Properties"]["DefinitionSubstitutions"][sub]["Fn::GetAtt"].is_array(),
            "{sub}"
        );
    }
}

/// Express's 5-minute limit holds for a batch's whole child execution, retries included
/// (issue 15): the ScrapePage Task passes the child's start time (`$$.Execution.StartTime`)
/// with the batch, so the handler's time budget runs from it and not from each attempt,
/// and its Retry is short enough that the budget, the last page started before it and every
/// retry end inside 300 s.
#[test]
fn a_batch_child_ends_inside_express_limit_retries_included() {
    use crawl_aws::sfn::{worst_child_secs, EXPRESS_LIMIT_SECS};
    for opts in [
        SfnOptions::default(),
        SfnOptions::default().with_max_concurrency(2),
    ] {
        let asl = state_machine(&opts);
        let task =
            &asl["States"][states::SCRAPE_LEVEL]["ItemProcessor"]["States"][states::SCRAPE_PAGE];
        assert_eq!(
            task["Parameters"]["ExecutionStartTime.$"], "$$.Execution.StartTime",
            "{task}"
        );
        assert_eq!(task["Parameters"]["Items.$"], "$.Items", "{task}");
        let worst = worst_child_secs(&asl);
        assert!(
            worst <= EXPRESS_LIMIT_SECS,
            "a batch's child may run {worst:.0} s, over Express's {EXPRESS_LIMIT_SECS} s"
        );
    }
    // The Lambda's timeout (deploy/template.yaml) lets the budget's last page finish.
    let tpl = std::fs::read_to_string(
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("deploy/template.yaml"),
    )
    .unwrap();
    let tpl: Value = serde_json::from_str(&tpl).unwrap();
    let scrape = tpl["Resources"]
        .as_object()
        .unwrap()
        .values()
        .find(|r| {
            r["Type"] == "AWS::Lambda::Function"
                && r["Properties"]["Environment"]["Variables"]["KB_CRAWL_HANDLER"] == "scrape"
        })
        .map(|r| r["Properties"]["Timeout"].as_f64().unwrap());
    let timeout = scrape.expect("the scrape function in deploy/template.yaml");
    let need = crawl_aws::sfn::BATCH_BUDGET_SECS as f64 + crawl_aws::sfn::PAGE_MAX_SECS;
    assert!(
        timeout >= need && timeout < EXPRESS_LIMIT_SECS,
        "scrape timeout {timeout} s"
    );
}
