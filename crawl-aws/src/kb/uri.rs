//! [`KbUri`]: the `--kb` URI naming a knowledge base to crawl straight into.

use std::fmt;
use std::str::FromStr;

use crawl_core::{Error, Result};

use super::contract::{check_assistant, check_bucket, check_kb_id, check_table};

/// A knowledge base to crawl into, as the CLI's `--kb` names it.
///
/// - `agentcore://ASSISTANTS_TABLE/DOCUMENTS_BUCKET?assistant=ID&index=VECTOR_BUCKET/INDEX`:
///   the host's document contract ([`AgentCoreIngestor`](super::AgentCoreIngestor)). With
///   `ssm=PREFIX` the table and bucket may be left out (`agentcore://?ssm=PREFIX&...`): they
///   are read from the host's SSM parameters. `user=ID` sets `importedByUserId`.
/// - `bedrock://BUCKET/PREFIX?kb=KB_ID&ds=DATA_SOURCE_ID`: an Amazon Bedrock Knowledge Bases
///   S3 data source ([`BedrockKbIngestor`](super::BedrockKbIngestor)); the prefix may be
///   empty.
///
/// Parsing checks every part and names the one that is wrong; names are checked again
/// (against the services' rules) when the ingestor is built.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum KbUri {
    /// The host's document contract.
    AgentCore {
        /// The assistants table, unless read from SSM.
        table: Option<String>,
        /// The documents bucket, unless read from SSM.
        bucket: Option<String>,
        /// The SSM prefix of the host's parameters.
        ssm_prefix: Option<String>,
        /// The assistant receiving the pages.
        assistant: String,
        /// The S3 Vectors bucket.
        vector_bucket: String,
        /// The S3 Vectors index.
        index: String,
        /// `importedByUserId`, when given.
        user: Option<String>,
    },
    /// A Bedrock Knowledge Bases S3 data source.
    Bedrock {
        /// The data source's bucket.
        bucket: String,
        /// The key prefix inside it (no surrounding slashes; may be empty).
        prefix: String,
        /// The knowledge base id.
        kb: String,
        /// The data source id.
        ds: String,
    },
}

fn bad(part: &str, detail: impl fmt::Display) -> Error {
    Error::invalid(format!("kb: {part}: {detail}"))
}

/// `key=value` pairs of a query, each key at most once, only those in `allowed`.
fn query<'a>(q: &'a str, allowed: &[&str]) -> Result<Vec<(&'a str, &'a str)>> {
    let mut out: Vec<(&str, &str)> = Vec::new();
    for pair in q.split('&').filter(|p| !p.is_empty()) {
        let (k, v) = pair
            .split_once('=')
            .ok_or_else(|| bad(pair, "a query part must be key=value"))?;
        if !allowed.contains(&k) {
            return Err(bad(
                k,
                format!(
                    "unknown parameter (expected one of: {})",
                    allowed.join(", ")
                ),
            ));
        }
        if out.iter().any(|(seen, _)| *seen == k) {
            return Err(bad(k, "given twice"));
        }
        if v.is_empty() {
            return Err(bad(k, "empty value"));
        }
        out.push((k, v));
    }
    Ok(out)
}

/// A service-rule check of the contract (its message starts with the field's name).
fn rule(check: std::result::Result<(), String>) -> Result<()> {
    check.map_err(|m| Error::invalid(format!("kb: {m}")))
}

fn get<'a>(q: &[(&str, &'a str)], k: &str) -> Option<&'a str> {
    q.iter().find(|(key, _)| *key == k).map(|(_, v)| *v)
}

/// A name part: non-empty, printable ASCII without `/`, `?`, `&`, `=`, `%` or spaces.
fn name(part: &str, v: &str) -> Result<String> {
    let ok = !v.is_empty()
        && v.len() <= 255
        && v.bytes()
            .all(|b| b.is_ascii_graphic() && !b"/?&=%#\\".contains(&b))
        && v != "."
        && v != "..";
    if ok {
        Ok(v.to_owned())
    } else {
        Err(bad(
            part,
            format!("'{}' is not a name", v.chars().take(80).collect::<String>()),
        ))
    }
}

impl FromStr for KbUri {
    type Err = Error;

    fn from_str(s: &str) -> Result<Self> {
        let s = s.trim();
        let (scheme, rest) = s
            .split_once("://")
            .ok_or_else(|| bad("scheme", "expected agentcore://... or bedrock://..."))?;
        let (path, q) = rest.split_once('?').unwrap_or((rest, ""));
        if path.contains('#') || q.contains('#') {
            return Err(bad("fragment", "a kb URI has no #fragment"));
        }
        match scheme {
            "agentcore" => {
                let q = query(q, &["assistant", "index", "ssm", "user"])?;
                let ssm_prefix = get(&q, "ssm").map(|p| name("ssm", p)).transpose()?;
                let parts: Vec<&str> = path.trim_end_matches('/').split('/').collect();
                let (table, bucket) = match parts.as_slice() {
                    [""] if ssm_prefix.is_some() => (None, None),
                    [t, b] => (
                        Some(name("assistants table", t)?),
                        Some(name("documents bucket", b)?),
                    ),
                    [t] if ssm_prefix.is_some() => (Some(name("assistants table", t)?), None),
                    _ => return Err(bad(
                        "path",
                        "expected agentcore://ASSISTANTS_TABLE/DOCUMENTS_BUCKET (or ?ssm=PREFIX)",
                    )),
                };
                let assistant = get(&q, "assistant")
                    .ok_or_else(|| bad("assistant", "required (?assistant=ID)"))?;
                let index = get(&q, "index")
                    .ok_or_else(|| bad("index", "required (&index=VECTOR_BUCKET/INDEX)"))?;
                let (vector_bucket, index) = index
                    .split_once('/')
                    .ok_or_else(|| bad("index", format!("'{index}' is not VECTOR_BUCKET/INDEX")))?;
                let uri = KbUri::AgentCore {
                    table,
                    bucket,
                    ssm_prefix,
                    assistant: name("assistant", assistant)?,
                    vector_bucket: name("index (vector bucket)", vector_bucket)?,
                    index: name("index", index)?,
                    user: get(&q, "user").map(|u| name("user", u)).transpose()?,
                };
                uri.check_rules()?;
                Ok(uri)
            }
            "bedrock" => {
                let q = query(q, &["kb", "ds"])?;
                let (bucket, prefix) = path.split_once('/').unwrap_or((path, ""));
                let bucket = name("bucket", bucket)?;
                let prefix = prefix.trim_matches('/');
                if prefix
                    .split('/')
                    .any(|p| p == "." || p == ".." || p.chars().any(char::is_control))
                    || prefix.contains("//")
                {
                    return Err(bad(
                        "prefix",
                        format!("'{prefix}' has an empty, '.', '..' or control-character segment"),
                    ));
                }
                let kb = get(&q, "kb").ok_or_else(|| bad("kb", "required (?kb=KB_ID)"))?;
                let ds = get(&q, "ds").ok_or_else(|| bad("ds", "required (&ds=DATA_SOURCE_ID)"))?;
                let uri = KbUri::Bedrock {
                    bucket,
                    prefix: prefix.to_owned(),
                    kb: name("kb", kb)?,
                    ds: name("ds", ds)?,
                };
                uri.check_rules()?;
                Ok(uri)
            }
            other => Err(bad(
                "scheme",
                format!(
                    "'{}' is not agentcore or bedrock",
                    other.chars().take(40).collect::<String>()
                ),
            )),
        }
    }
}

impl fmt::Display for KbUri {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            KbUri::AgentCore {
                table,
                bucket,
                ssm_prefix,
                assistant,
                vector_bucket,
                index,
                user,
            } => {
                write!(f, "agentcore://")?;
                if let Some(t) = table {
                    write!(f, "{t}")?;
                }
                if let Some(b) = bucket {
                    write!(f, "/{b}")?;
                }
                write!(f, "?assistant={assistant}&index={vector_bucket}/{index}")?;
                if let Some(p) = ssm_prefix {
                    write!(f, "&ssm={p}")?;
                }
                if let Some(u) = user {
                    write!(f, "&user={u}")?;
                }
                Ok(())
            }
            KbUri::Bedrock {
                bucket,
                prefix,
                kb,
                ds,
            } => write!(f, "bedrock://{bucket}/{prefix}?kb={kb}&ds={ds}"),
        }
    }
}

impl KbUri {
    /// The services' naming rules (the ones the ingestors' builders check again), so a bad
    /// name is refused before anything is crawled or written.
    fn check_rules(&self) -> Result<()> {
        match self {
            KbUri::AgentCore {
                table,
                bucket,
                assistant,
                vector_bucket,
                index,
                ..
            } => {
                if let Some(t) = table {
                    rule(check_table("assistants table", t))?;
                }
                if let Some(b) = bucket {
                    rule(check_bucket("documents bucket", b))?;
                }
                rule(check_assistant(assistant))?;
                rule(check_bucket("index (vector bucket)", vector_bucket))?;
                rule(check_bucket("index", index))
            }
            KbUri::Bedrock { bucket, kb, ds, .. } => {
                rule(check_bucket("bucket", bucket))?;
                rule(check_kb_id("kb", kb))?;
                rule(check_kb_id("ds", ds))
            }
        }
    }

    /// Builds the ingestor this URI names, reading documents back from `sink`; endpoint,
    /// region and credentials come from the SDK's environment (`AWS_ENDPOINT_URL`,
    /// `AWS_REGION`, the credential chain). A target this build lacks the feature for is an
    /// error naming the feature.
    pub async fn connect(&self, sink: crawl_core::DynSink) -> Result<KbIngestor> {
        match self {
            #[cfg(feature = "agentcore")]
            KbUri::AgentCore {
                table,
                bucket,
                ssm_prefix,
                assistant,
                vector_bucket,
                index,
                user,
            } => {
                let mut b = super::AgentCoreIngestor::builder()
                    .sink(sink)
                    .assistant(assistant)
                    .vector_index(vector_bucket, index);
                if let Some(t) = table {
                    b = b.assistants_table(t);
                }
                if let Some(x) = bucket {
                    b = b.documents_bucket(x);
                }
                if let Some(p) = ssm_prefix {
                    b = b.ssm_prefix(p);
                }
                if let Some(u) = user {
                    b = b.imported_by(u);
                }
                Ok(KbIngestor::AgentCore(b.build().await?))
            }
            #[cfg(feature = "bedrock-kb")]
            KbUri::Bedrock {
                bucket,
                prefix,
                kb,
                ds,
            } => Ok(KbIngestor::Bedrock(
                super::BedrockKbIngestor::builder()
                    .sink(sink)
                    .bucket(bucket)
                    .prefix(prefix)
                    .knowledge_base(kb, ds)
                    .build()
                    .await?,
            )),
            #[allow(unreachable_patterns)] // Unreachable with both features on.
            other => {
                let _ = sink;
                let feature = match other {
                    KbUri::AgentCore { .. } => "agentcore",
                    KbUri::Bedrock { .. } => "bedrock-kb",
                };
                Err(Error::invalid(format!(
                    "kb: this build has no {feature} target (crawl-aws feature `{feature}`)"
                )))
            }
        }
    }
}

/// The ingestor a [`KbUri`] names.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum KbIngestor {
    /// The host's document contract.
    #[cfg(feature = "agentcore")]
    AgentCore(super::AgentCoreIngestor),
    /// A Bedrock Knowledge Bases data source.
    #[cfg(feature = "bedrock-kb")]
    Bedrock(super::BedrockKbIngestor),
}

impl KbIngestor {
    /// As a shared ingestor handle for [`Crawler::builder`](crawl_core::Crawler::builder).
    pub fn as_dyn(&self) -> crawl_core::DynIngestor {
        match self {
            #[cfg(feature = "agentcore")]
            KbIngestor::AgentCore(i) => std::sync::Arc::new(i.clone()),
            #[cfg(feature = "bedrock-kb")]
            KbIngestor::Bedrock(i) => std::sync::Arc::new(i.clone()),
        }
    }

    /// The report of the latest delivery.
    pub fn last_report(&self) -> super::KbReport {
        match self {
            #[cfg(feature = "agentcore")]
            KbIngestor::AgentCore(i) => i.last_report(),
            #[cfg(feature = "bedrock-kb")]
            KbIngestor::Bedrock(i) => i.last_report(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn agentcore_uris_parse_with_every_part() {
        let u: KbUri = "agentcore://dev-rag-assistants/dev-rag-documents-123?assistant=AST-1&index=dev-vectors/dev-index&user=u-7"
            .parse()
            .unwrap();
        assert_eq!(
            u,
            KbUri::AgentCore {
                table: Some("dev-rag-assistants".into()),
                bucket: Some("dev-rag-documents-123".into()),
                ssm_prefix: None,
                assistant: "AST-1".into(),
                vector_bucket: "dev-vectors".into(),
                index: "dev-index".into(),
                user: Some("u-7".into()),
            }
        );
        assert_eq!(u.to_string().parse::<KbUri>().unwrap(), u);
        let ssm: KbUri = "agentcore://?ssm=dev&assistant=a&index=vbk/idx"
            .parse()
            .unwrap();
        assert!(
            matches!(ssm, KbUri::AgentCore { table: None, bucket: None, ssm_prefix: Some(ref p), .. } if p == "dev")
        );
    }

    #[test]
    fn bedrock_uris_parse_with_or_without_a_prefix() {
        let u: KbUri = "bedrock://kb-bucket/docs/site/?kb=KB123&ds=DS456"
            .parse()
            .unwrap();
        assert_eq!(
            u,
            KbUri::Bedrock {
                bucket: "kb-bucket".into(),
                prefix: "docs/site".into(),
                kb: "KB123".into(),
                ds: "DS456".into(),
            }
        );
        assert_eq!(u.to_string().parse::<KbUri>().unwrap(), u);
        let bare: KbUri = "bedrock://kb-bucket?kb=K&ds=D".parse().unwrap();
        assert!(matches!(bare, KbUri::Bedrock { ref prefix, .. } if prefix.is_empty()));
    }

    #[test]
    fn bad_uris_name_the_wrong_part() {
        for (uri, part) in [
            ("kb-bucket", "kb: scheme:"),
            ("s3://b/p?kb=k&ds=d", "kb: scheme:"),
            ("agentcore://t/b?index=vb/ix", "kb: assistant:"),
            ("agentcore://t/b?assistant=a", "kb: index:"),
            ("agentcore://t/b?assistant=a&index=vbix", "kb: index:"),
            ("agentcore://t?assistant=a&index=vb/ix", "kb: path:"),
            ("agentcore://t/b/c?assistant=a&index=vb/ix", "kb: path:"),
            (
                "agentcore://t/b?assistant=a&index=vb/ix&colour=red",
                "kb: colour:",
            ),
            (
                "agentcore://t/b?assistant=a&assistant=b&index=vb/ix",
                "kb: assistant:",
            ),
            ("agentcore://t/b?assistant=&index=vb/ix", "kb: assistant:"),
            ("agentcore://t/b?assistant=..&index=vb/ix", "kb: assistant:"),
            (
                "agentcore://t/b?assistant=a%2f..&index=vb/ix",
                "kb: assistant:",
            ),
            ("agentcore://t/b?assistant=a&index=vb/", "kb: index:"),
            ("bedrock://b/p?ds=d", "kb: kb:"),
            ("bedrock://b/p?kb=k", "kb: ds:"),
            ("bedrock://?kb=k&ds=d", "kb: bucket:"),
            ("bedrock://b/a/../c?kb=k&ds=d", "kb: prefix:"),
            ("bedrock://b/a//c?kb=k&ds=d", "kb: prefix:"),
            ("bedrock://b/p?kb=k&ds=d#x", "kb: fragment:"),
            ("bedrock://b/p?kb", "kb: kb:"),
            ("bedrock://Bad_Bucket/p?kb=k&ds=d", "kb: bucket:"),
            ("bedrock://bkt/p?kb=K-1&ds=d", "kb: kb:"),
            ("bedrock://bkt/p?kb=k&ds=d.s", "kb: ds:"),
            (
                "agentcore://t/b?assistant=a&index=vb/ix",
                "kb: assistants table:",
            ),
            (
                "agentcore://tbl/B_x?assistant=a&index=vb/ix",
                "kb: documents bucket:",
            ),
            (
                "agentcore://tbl/bkt?assistant=a!b&index=vb/ix",
                "kb: assistant:",
            ),
            (
                "agentcore://tbl/bkt?assistant=a&index=VB/ix",
                "kb: index (vector bucket):",
            ),
            ("agentcore://tbl/bkt?assistant=a&index=vbk/Ix", "kb: index:"),
        ] {
            let e = uri.parse::<KbUri>().unwrap_err();
            assert!(e.to_string().contains(part), "{uri}: {e}");
            assert_eq!(e.kind(), crawl_core::ErrorKind::InvalidInput, "{uri}");
        }
    }
}
