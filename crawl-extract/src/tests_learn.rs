//! The learned block scorer: model files, and how a model refines the rules' selection.

use super::learned::{block_features, extract_with, feature_names, BlockModel};
use super::*;

fn url() -> Url {
    Url::parse("https://example.com/a/page.html").expect("static URL")
}

/// A model of one tree splitting on `feature` at 0.5: logit `low` below, `high` above.
fn stump(feature: &str, low: f64, high: f64, drop: f64, add: f64) -> BlockModel {
    let f = feature_names()
        .iter()
        .position(|n| *n == feature)
        .expect("known feature");
    let text = format!(
        "kb-extract-gbdt 1\nfeatures {}\nbase 0\ndrop {drop}\nadd {add}\ntree 3\n\
         {f} 0.5 1 2 0\n-1 0 0 0 {low}\n-1 0 0 0 {high}\n",
        feature_names().join(" ")
    );
    BlockModel::parse(&text).expect("valid model")
}

fn md(html: &str, model: Option<&BlockModel>) -> String {
    extract_with(html, &url(), &ExtractOptions::default(), model).markdown
}

const PROSE: &str = "The committee met on Tuesday to discuss the budget for next year, \
    and after a long debate it agreed to fund the new library wing in full.";

fn article(extra: &str) -> String {
    format!(
        "<html><body><nav><a href='/'>Home</a> <a href='/news'>News</a></nav>\
         <div id='sidebar-x'><p>Sidebar words that the rules leave out of the content.</p></div>\
         <article><h1>Budget approved</h1><p>{PROSE}</p><p>{PROSE}</p>{extra}<p>{PROSE}</p>\
         </article></body></html>"
    )
}

#[test]
fn the_committed_block_model_parses() {
    // A model file that does not parse would silently leave the rules alone.
    assert!(learn::committed().is_some());
}

#[test]
fn a_block_model_drops_a_block_the_rules_keep() {
    let html = article("<ul><li>Printed edition only</li><li>Subscribers only</li></ul>");
    let rules = md(&html, None);
    assert!(rules.contains("Printed edition only"), "{rules}");
    // List items score -5, everything else +5; blocks below 0 are dropped.
    let m = stump("tag_li", 5.0, -5.0, 0.0, 100.0);
    let out = md(&html, Some(&m));
    assert!(!out.contains("Printed edition only"), "{out}");
    assert!(
        out.contains("# Budget approved") && out.contains("agreed to fund"),
        "{out}"
    );
}

#[test]
fn a_block_model_adds_a_block_the_rules_leave_out() {
    let html = article("");
    assert!(!md(&html, None).contains("Sidebar words"));
    // Every block scores +5 and blocks outside the rules' content above 0 are added.
    let m = stump("tag_li", 5.0, 5.0, 0.0, 0.0);
    let out = md(&html, Some(&m));
    assert!(out.contains("Sidebar words"), "{out}");
}

#[test]
fn images_and_byline_spans_follow_the_rules_when_the_model_agrees() {
    let html = article(
        "<figure><img src='/chart.png' alt='budget chart'></figure>\
         <p>By <span class='share-buttons'>Share this story</span> the desk.</p>\
         <ul><li>Printed edition only</li></ul>",
    );
    let rules = md(&html, None);
    // A model that drops one list item renders the rest as the rules do: the image of a
    // text-less `<figure>` stays, the chrome `<span>` inside a kept paragraph stays out.
    let m = stump("tag_li", 5.0, -5.0, 0.0, 100.0);
    let out = md(&html, Some(&m));
    assert!(
        rules.contains("chart.png") && !rules.contains("Share this story"),
        "{rules}"
    );
    assert!(!out.contains("Printed edition only"), "{out}");
    assert_eq!(
        out.replace(char::is_whitespace, ""),
        rules
            .replace("- Printed edition only", "")
            .replace(char::is_whitespace, "")
    );
}

#[test]
fn a_model_over_its_cap_leaves_the_rules_choice() {
    let html = article("");
    let rules = md(&html, None);
    // Paragraphs score -5: the model would drop nearly all of the rules' content.
    let f = feature_names()
        .iter()
        .position(|n| *n == "tag_p")
        .expect("known feature");
    let model = |cap: f64| {
        let text = format!(
            "kb-extract-gbdt 1\nfeatures {}\nbase 0\ndrop 0\nadd inf\ncap {cap}\ntree 3\n\
             {f} 0.5 1 2 0\n-1 0 0 0 5\n-1 0 0 0 -5\n",
            feature_names().join(" ")
        );
        BlockModel::parse(&text).expect("valid model")
    };
    assert_eq!(md(&html, Some(&model(0.2))), rules);
    let uncapped = md(&html, Some(&model(1.0)));
    assert!(
        uncapped.contains("# Budget approved") && !uncapped.contains("agreed to fund"),
        "{uncapped}"
    );
}

#[test]
fn a_block_knows_the_heading_of_its_section() {
    let html = article(
        "<h2>Customer reviews</h2><p>Great library, five stars.</p>\
         <h3><a href='/related'>Related stories</a></h3><p>Another budget story.</p>",
    );
    let blocks = block_features(&html, &ExtractOptions::default());
    let names = feature_names();
    let col = |n: &str| names.iter().position(|x| *x == n).expect("feature");
    let of = |start: &str| {
        &blocks
            .iter()
            .find(|(t, _)| t.starts_with(start))
            .expect("block")
            .1
    };
    let review = of("Great library");
    assert_eq!(review[col("sec_h_level")], 2.0);
    assert_eq!(review[col("sec_h_dist")], 1.0);
    assert_eq!(review[col("sec_h_feedback")], 1.0);
    assert_eq!(review[col("sec_h_shelf")], 0.0);
    let related = of("Another budget");
    assert_eq!(related[col("sec_h_level")], 3.0);
    assert_eq!(related[col("sec_h_link")], 1.0);
    assert_eq!(related[col("sec_h_shelf")], 1.0);
    let first = of("The committee met");
    assert_eq!(first[col("sec_h_level")], 1.0);
    assert_eq!(first[col("sec_h_feedback")], 0.0);
    let h1 = of("Budget approved");
    assert_eq!(h1[col("sec_h_level")], 0.0);
    assert_eq!(h1[col("sec_h_dist")], 99.0);
}

#[test]
fn a_model_of_other_features_is_refused_naming_the_problem() {
    let e = BlockModel::parse("kb-extract-gbdt 1\nfeatures a b c\n").expect_err("refused");
    assert!(e.contains("features"), "{e}");
    let e = BlockModel::parse("something else").expect_err("refused");
    assert!(e.contains("kb-extract-gbdt"), "{e}");
    let bad = format!(
        "kb-extract-gbdt 1\nfeatures {}\ntree 3\n0 0.5 1 9 0\n",
        feature_names().join(" ")
    );
    assert!(BlockModel::parse(&bad).is_err());
}

#[test]
fn features_are_computed_per_text_owning_block() {
    let html = article("");
    let blocks = block_features(&html, &ExtractOptions::default());
    let names = feature_names();
    let col = |n: &str| names.iter().position(|x| *x == n).expect("feature");
    let h1 = blocks
        .iter()
        .find(|(t, _)| t == "Budget approved")
        .expect("the h1 is a block");
    assert_eq!(h1.1[col("tag_h1")], 1.0);
    assert_eq!(h1.1[col("in_rule_root")], 1.0);
    let side = blocks
        .iter()
        .find(|(t, _)| t.starts_with("Sidebar words"))
        .expect("the sidebar paragraph is a block");
    assert_eq!(side.1[col("in_rule_root")], 0.0);
    assert_eq!(side.1[col("tag_p")], 1.0);
    // The links of the nav are inline: their block is the `<nav>`, all of it link text.
    let nav = blocks
        .iter()
        .find(|(t, _)| t == "Home News")
        .expect("the nav is one block");
    assert_eq!(nav.1[col("own_link")], 1.0);
    assert!(blocks.iter().all(|(_, f)| f.len() == names.len()));
}
