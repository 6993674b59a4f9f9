//! Secrets by their real formats, not by the words around them.
//!
//! Three kinds of evidence:
//! - **a format**: a provider's key prefix and shape (`AKIA…`, `ghp_…`,
//!   `xoxb-…`, `sk_live_…`, `AIza…`, `glpat-…`, `sk-ant-…`), a private key
//!   block, a password inside a URL;
//! - **an assignment**: a name that says secret (`password`, `api_key`,
//!   `client_secret`, `token`) given a literal that looks like one — long
//!   enough, random enough (Shannon entropy), and neither a placeholder
//!   (`changeme`, `<your-key>`, `xxxx`), a template (`${TOKEN}`, `{{ token }}`),
//!   nor a lookup (`os.environ[...]`, `getenv(...)`);
//! - **a provider's name** (`providers.txt`: services whose keys have no fixed
//!   prefix) with a key-like token starting within 40 characters after it
//!   (`mailgun '…'`, `[INFO] using sendgrid key …`).
//!
//! A line can opt out with `ironbees:allow-secret` (or gitleaks' `gitleaks:allow`
//! and detect-secrets' `pragma: allowlist secret`), for test fixtures.

use std::sync::LazyLock;

use regex::Regex;

/// A secret found on a line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Secret {
    /// What kind: `AWS access key`, `GitHub token`, `private key`, ...
    pub kind: &'static str,
    /// Byte range of the secret in the line.
    pub start: usize,
    pub end: usize,
}

impl Secret {
    /// The line with the secret masked (first and last two characters kept).
    pub fn masked(&self, line: &str) -> String {
        let s = &line[self.start..self.end];
        let keep = |n: usize| s.chars().take(n).collect::<String>();
        let tail: String = s.chars().rev().take(2).collect::<Vec<_>>().into_iter().rev().collect();
        let shown =
            if s.chars().count() > 8 { format!("{}…{tail}", keep(4)) } else { "…".into() };
        format!("{}{shown}{}", &line[..self.start], &line[self.end..])
    }
}

struct Format {
    kind: &'static str,
    regex: Regex,
    /// The capture group holding the secret (0: the whole match).
    group: usize,
}

fn format(kind: &'static str, pattern: &str, group: usize) -> Format {
    Format { kind, regex: Regex::new(pattern).expect("a valid built-in pattern"), group }
}

static FORMATS: LazyLock<Vec<Format>> = LazyLock::new(|| {
    vec![
        format("AWS access key", r"\b((?:A3T[A-Z0-9]|AKIA|ASIA|ABIA|ACCA)[A-Z2-7]{16})\b", 1),
        format(
            "AWS secret key",
            r#"(?i)aws.{0,20}?(?:secret|private)?.{0,10}?key.{0,10}?['"=:\s]\s*['"]?([A-Za-z0-9/+]{40})(?:['"\s]|$)"#,
            1,
        ),
        format("GitHub token", r"\b((?:ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9]{36,255})\b", 1),
        format("GitHub token", r"\b(github_pat_[A-Za-z0-9_]{82})\b", 1),
        format("GitLab token", r"\b(glpat-[A-Za-z0-9_\-]{20,})\b", 1),
        // GitLab's other tokens, by the length each is generated with: deploy,
        // feed, OAuth access, runner, runner registration and CI job tokens
        // (20 to 50), incoming mail (25), trigger (40), agent (50+), OAuth
        // application secret (64).
        format(
            "GitLab token",
            r"\b((?:(?:gldt|glft|glsoat|glrt)-|GR1348941|glcbt-(?:[0-9a-fA-F]{2}_)?)[A-Za-z0-9_\-]{20,50})(?:[^A-Za-z0-9_\-]|$)",
            1,
        ),
        format("GitLab token", r"\b(glimt-[A-Za-z0-9_\-]{25})(?:[^A-Za-z0-9_\-]|$)", 1),
        format("GitLab token", r"\b(glptt-[A-Za-z0-9_\-]{40})(?:[^A-Za-z0-9_\-]|$)", 1),
        format("GitLab token", r"\b(glagent-[A-Za-z0-9_\-]{50,1024})(?:[^A-Za-z0-9_\-]|$)", 1),
        format("GitLab token", r"\b(gloas-[A-Za-z0-9_\-]{64})(?:[^A-Za-z0-9_\-]|$)", 1),
        format(
            "Discord bot token",
            r"\b([MNO][A-Za-z0-9_\-]{23,25}\.[A-Za-z0-9_\-]{6}\.[A-Za-z0-9_\-]{27,38})\b",
            1,
        ),
        format(
            "Telegram bot token",
            r"(?:^|[^0-9A-Za-z_]|bot)(\d{8,10}:AA[0-9A-Za-z_\-]{33})(?:[^0-9A-Za-z_\-]|$)",
            1,
        ),
        format("Mailchimp key", r"\b([0-9a-f]{32}-us\d{1,2})\b", 1),
        format("Square token", r"\b(sq0(?:csp|atp|idp)-[0-9A-Za-z_\-]{22,43})", 1),
        format("Azure storage key", r"(?i)AccountKey=([A-Za-z0-9+/]{86}==)", 1),
        // `.npmrc`: `//registry.npmjs.org/:_authToken=…`.
        format("npm token", r"//[^\s]*/:_authToken=\s*([A-Za-z0-9_\-]{20,})", 1),
        format("Slack token", r"\b(xox[abposre]-[0-9A-Za-z-]{10,})", 1),
        format(
            "Slack webhook",
            r"(https://hooks\.slack\.com/(?:services|workflows)/[A-Za-z0-9+/]{20,})",
            1,
        ),
        // Secret and restricted keys, live and test mode (a test key still
        // reads and writes the account's test data); not `pk_`, which is public.
        format("Stripe key", r"\b((?:sk|rk)_(?:live|test)_[0-9A-Za-z]{20,})\b", 1),
        format("Google API key", r"\b(AIza[0-9A-Za-z_\-]{35})(?:[^0-9A-Za-z_\-]|$)", 1),
        format(
            "OpenAI key",
            r"\b(sk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_\-]{20,}T3BlbkFJ[A-Za-z0-9_\-]{20,})\b",
            1,
        ),
        format("OpenAI key", r"\b(sk-proj-[A-Za-z0-9_\-]{50,})\b", 1),
        format("Anthropic key", r"\b(sk-ant-(?:api|admin)\d{2}-[A-Za-z0-9_\-]{80,})", 1),
        format("SendGrid key", r"\b(SG\.[A-Za-z0-9_\-]{22}\.[A-Za-z0-9_\-]{43})\b", 1),
        format("npm token", r"\b(npm_[A-Za-z0-9]{36})\b", 1),
        // A PyPI (or TestPyPI) macaroon is long: its caveats alone are over a
        // hundred characters.
        format(
            "PyPI token",
            r"\b(pypi-AgE(?:IcHlwaS5vcmc|NdGVzdC5weXBpLm9yZw)[A-Za-z0-9_\-]{70,})",
            1,
        ),
        format("Twilio key", r"\b(SK[0-9a-f]{32})\b", 1),
        format("Mailgun key", r"\b(key-[0-9a-f]{32})\b", 1),
        format("Shippo token", r"\b(shippo_(?:live|test)_[0-9a-f]{40})\b", 1),
        format(
            "Duffel token",
            r"\b(duffel_(?:live|test)_[A-Za-z0-9_\-=]{43})(?:[^A-Za-z0-9_\-=]|$)",
            1,
        ),
        // Fly.io: `fo1_` org tokens; `fm1r_`/`fm1a_`/`fm2_` macaroons, long.
        format("Fly.io token", r"\b(fo1_[A-Za-z0-9_\-]{43})(?:[^A-Za-z0-9_\-]|$)", 1),
        format("Fly.io token", r"\b(fm(?:1[ar]|2)_[A-Za-z0-9+/=_\-]{100,})", 1),
        format("Hugging Face token", r"\b((?:hf|api_org)_[A-Za-z]{34})\b", 1),
        format(
            "PlanetScale token",
            r"\b(pscale_(?:pw|tkn|oauth)_[A-Za-z0-9_\-=.]{32,64})(?:[^A-Za-z0-9_\-=.]|$)",
            1,
        ),
        // Lob secret keys (`live_`/`test_` + 35 hex); `*_pub_` keys are public.
        format("Lob key", r"\b((?:live|test)_[0-9a-f]{35})\b", 1),
        format("Sourcegraph token", r"\b(sgp_(?:local_|[0-9A-Fa-f]{16}_)?[0-9A-Fa-f]{40})\b", 1),
        // A Graph API access token: `EAA` and a long base62 body.
        format("Facebook token", r"\b(EAA[A-Za-z0-9]{90,})\b", 1),
        format("Adobe client secret", r"\b(p8e-[A-Za-z0-9\-]{32})(?:[^A-Za-z0-9\-]|$)", 1),
        // 1Password: the account Secret Key (`A3-` + account id + 26
        // characters in groups) and service-account tokens (`ops_` + JWT-ish).
        format(
            "1Password secret key",
            r"\b(A3-[A-Z0-9]{6}-(?:[A-Z0-9]{11}|[A-Z0-9]{6}-[A-Z0-9]{5})-[A-Z0-9]{5}-[A-Z0-9]{5}-[A-Z0-9]{5})\b",
            1,
        ),
        format("1Password token", r"\b(ops_eyJ[A-Za-z0-9+/=_\-]{250,})", 1),
        // age: bech32, `AGE-SECRET-KEY-1` and 58 characters of its alphabet.
        format(
            "age secret key",
            r"\b(AGE-SECRET-KEY-1[QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L]{58})\b",
            1,
        ),
        format("Alibaba access key", r"\b(LTAI[A-Za-z0-9]{12,20})\b", 1),
        // Sidekiq Pro/Enterprise gem credentials, `xxxxxxxx:xxxxxxxx` (hex).
        format(
            "Sidekiq credentials",
            r"(?i)BUNDLE_(?:ENTERPRISE|GEMS)__CONTRIBSYS__COM\s*[:=]\s*['\x22]?([0-9a-f]{8}:[0-9a-f]{8})\b",
            1,
        ),
        format(
            "Sidekiq credentials",
            r"(?i)https?://([0-9a-f]{8}:[0-9a-f]{8})@(?:gems|enterprise)\.contribsys\.com",
            1,
        ),
        // Dropbox: short-lived access tokens, and long-lived ones (11
        // characters, ten `A`s, 43 more: the run is part of the format, so
        // only the parts around it are checked for filler).
        format("Dropbox token", r"\b(sl\.[A-Za-z0-9_\-]{130,152})(?:[^A-Za-z0-9_\-]|$)", 1),
        format(
            "Dropbox token",
            r"(?:^|[^A-Za-z0-9_\-=])([a-z0-9]{11}AAAAAAAAAA[a-z0-9_\-=]{43})(?:[^A-Za-z0-9_\-=]|$)",
            1,
        ),
        // Flutterwave secret keys (`FLWSECK-` / `FLWSECK_TEST-`, 32 hex, `-X`)
        // and encryption keys (`FLWSECK_TEST` + 12 hex); `FLWPUBK` is public.
        format("Flutterwave key", r"\b(FLWSECK(?:_TEST)?-[0-9a-fA-F]{32}-X)\b", 1),
        format("Flutterwave key", r"\b(FLWSECK_TEST[0-9a-fA-F]{12})\b", 1),
        // Asana personal access tokens: `1/` or `0/` + user id + `:` + 32
        // hex, and the newer `2/` + user id + `/` + app id + `:` + 32 hex.
        format("Asana token", r"\b([012]/\d{10,20}(?:/\d{10,20})?:[0-9a-f]{32})\b", 1),
        // A Google Cloud service account key file written on one line.
        format(
            "GCP service account key",
            r#"("type"\s*:\s*"service_account".*"private_key(?:_id)?"\s*:\s*"[^"\s]{16,})"#,
            1,
        ),
        // Notion integration tokens: `secret_` + 43, `ntn_` + 11 digits + 35.
        format("Notion token", r"\b(secret_[A-Za-z0-9]{43}|ntn_[0-9]{11}[A-Za-z0-9]{35})\b", 1),
        format(
            "Microsoft Teams webhook",
            r"(https://[a-z0-9\-]+\.webhook\.office\.com/webhookb2/[0-9a-f\-]{36}@[0-9a-f\-]{36}/IncomingWebhook/[0-9a-f]{32}/[0-9a-f\-]{36})",
            1,
        ),
        // Azure AD (Entra) client secrets: three characters, a digit, `Q~`,
        // then 31 to 34 more.
        format(
            "Azure AD client secret",
            r"(?:^|[^A-Za-z0-9_~.\-])([A-Za-z0-9_~.]{3}\dQ~[A-Za-z0-9_~.\-]{31,34})(?:[^A-Za-z0-9_~.\-]|$)",
            1,
        ),
        format("OpenShift token", r"(sha256~[A-Za-z0-9_\-]{43})(?:[^A-Za-z0-9_\-]|$)", 1),
        format("Vault token", r"\b(hv[sb]\.[A-Za-z0-9_\-]{90,})", 1),
        format("Heroku key", r"\b(HRKU-AA[0-9A-Za-z_\-]{58})(?:[^0-9A-Za-z_\-]|$)", 1),
        format("42 Intra client secret", r"\b(s-s4t2(?:ud|af)-[0-9a-f]{64})\b", 1),
        format("EasyPost key", r"\b(EZ[AT]K[A-Za-z0-9]{54})\b", 1),
        format("Grafana token", r"\b(glc_[A-Za-z0-9+/]{32,400}={0,2})", 1),
        format("Grafana token", r"\b(glsa_[A-Za-z0-9]{32}_[0-9a-f]{8})\b", 1),
        // Amazon Bedrock long-term keys: `ABSK` + base64 of `BedrockAPIKey-…`.
        format("AWS Bedrock key", r"\b(ABSKQmVkcm9ja0FQSUtleS[A-Za-z0-9+/]{40,}={0,2})", 1),
        format(
            "Authress key",
            r"\b((?:sc|ext|scauth|authress)_[a-z0-9]{5,30}\.[a-z0-9]{4,6}\.acc[_\-][a-z0-9\-]{10,32}\.[a-z0-9+/_=\-]{30,120})",
            1,
        ),
        // Discord webhooks: the URL holds the webhook's id and its token.
        format(
            "Discord webhook",
            r"(https://(?:ptb\.|canary\.)?discord(?:app)?\.com/api/webhooks/\d{17,20}/[A-Za-z0-9_\-]{60,68})",
            1,
        ),
        // Salesforce access tokens (session ids): the 15-character org id
        // (`00D…`), `!`, and the session part.
        format("Salesforce token", r"\b(00[A-Za-z0-9]{13}![A-Za-z0-9_.]{80,})", 1),
        // New Relic: user API keys (`NRAK-` + 27), insert and query keys
        // (`NRII-`/`NRIQ-` + 32); not the browser (`NRJS-`/`NRBR-`) keys,
        // which a page ships.
        format("New Relic key", r"\b(NRAK-[A-Z0-9]{27})\b", 1),
        format("New Relic key", r"\b(NRI[IQ]-[A-Za-z0-9_\-]{32})(?:[^A-Za-z0-9_\-]|$)", 1),
        // Azure Container Registry passwords carry Azure's `+ACR` signature at
        // a fixed place.
        format(
            "Azure container registry password",
            r"(?:^|[^A-Za-z0-9+/])([A-Za-z0-9+/]{42}\+ACR[A-Za-z0-9]{6})(?:[^A-Za-z0-9+/=]|$)",
            1,
        ),
        // Power Automate / Logic Apps workflow URLs: signed by their `sig`.
        format(
            "Power Automate webhook",
            r"(https://[A-Za-z0-9.\-]+\.(?:environment\.api\.powerplatform\.com|logic\.azure\.com)(?::\d+)?/[^\s'\x22]*?[?&]sig=[A-Za-z0-9_\-%]{20,})",
            1,
        ),
        // Atlassian API tokens (`ATATT3…`, `ATCTT3…`, with a checksum) and
        // Bitbucket app passwords (`ATBB…`).
        format(
            "Atlassian token",
            r"(?:^|[^A-Za-z0-9+/_\-])(AT(?:ATT|CTT)3[A-Za-z0-9_\-=]{150,300})(?:[^A-Za-z0-9_\-=]|$)",
            1,
        ),
        format(
            "Bitbucket app password",
            r"(?:^|[^A-Za-z0-9+/=_\-])(ATBB[A-Za-z0-9_=.\-]{24,40})(?:[^A-Za-z0-9_=.\-]|$)",
            1,
        ),
        format("Pinecone key", r"\b(pcsk_[A-Za-z0-9]{4,8}_[A-Za-z0-9]{50,80})\b", 1),
        // Sentry organization (`sntrys_` + base64 JSON + `_` + 43) and user
        // (`sntryu_` + 64 hex) tokens.
        format("Sentry token", r"\b(sntrys_eyJ[A-Za-z0-9+/=]{40,}_[A-Za-z0-9+/]{43})", 1),
        format("Sentry token", r"\b(sntryu_[0-9a-f]{64})\b", 1),
        // MaxMind license keys: 6, `_`, 29, `_mmk`.
        format("MaxMind license key", r"\b([A-Za-z0-9]{6}_[A-Za-z0-9]{29}_mmk)\b", 1),
        format(
            "private key",
            r"(-----BEGIN (?:RSA |DSA |EC |OPENSSH |PGP |ENCRYPTED )?PRIVATE KEY(?: BLOCK)?-----)",
            1,
        ),
    ]
});

/// `header.payload[.signature]`, both JSON objects in base64url; checked by
/// decoding them.
static JWT: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"\b(eyJ[A-Za-z0-9_\-]{10,})\.(eyJ[A-Za-z0-9_\-]{10,})(?:\.[A-Za-z0-9_\-]*)?")
        .expect("valid")
});

/// Decodes base64 or base64url (padding optional); `None` if it is not.
fn base64_decode(s: &str) -> Option<Vec<u8>> {
    let s = s.trim_end_matches('=');
    let mut out = Vec::with_capacity(s.len() * 3 / 4);
    let (mut acc, mut bits) = (0u32, 0u32);
    for b in s.bytes() {
        let v = match b {
            b'A'..=b'Z' => b - b'A',
            b'a'..=b'z' => b - b'a' + 26,
            b'0'..=b'9' => b - b'0' + 52,
            b'+' | b'-' => 62,
            b'/' | b'_' => 63,
            _ => return None,
        };
        acc = (acc << 6) | u32::from(v);
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
        }
    }
    Some(out)
}

fn is_json_object_b64(s: &str) -> bool {
    base64_decode(s)
        .and_then(|b| serde_json::from_slice::<serde_json::Value>(&b).ok())
        .is_some_and(|v| v.is_object())
}

/// `scheme://user:PASSWORD@host`.
static URL_PASSWORD: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"\b[a-zA-Z][a-zA-Z0-9+.\-]{1,20}://[^\s:/@'\x22]{1,64}:([^\s@/'\x22]{6,})@[A-Za-z0-9.\-]+",
    )
    .expect("valid")
});

/// `name = "value"`, `name: 'value'`, `"name": "value"`, `NAME=value` where the
/// name says secret; also `var name string = "…"` (a Go type between),
/// `env["NAME"] = "…"`, and the operators of Makefiles (`?=`, `::=`,
/// `:::=`, `+=`) and PHP (`.=`).
static ASSIGNMENT: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(&format!(
        r#"(?i)({SECRET_NAME})(?:['"]?\]?(?:\[\d*\])?|\s+[A-Za-z_][A-Za-z0-9_.]*)\s*{ASSIGN_OP}\s*(?:[bru@]{{0,2}})(['"`])([^'"`\n]{{8,}})(['"`])"#
    ))
    .expect("valid")
});

/// Assignment operators: `=`, `:`, `:=`, `=>`, Makefile's `::=`, `:::=`,
/// `?=`, `+=`, PHP's `.=`.
const ASSIGN_OP: &str = r"(?::{1,3}=|[?+.]=|=>|[:=])";

/// A call whose first argument is a secret name and whose second is a
/// literal: `System.setProperty("API_TOKEN", "…")`, `os.environ.setdefault(
/// "DB_PASSWORD", "…")`, `config.set("password", "…")`.
static SETTER: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(&format!(r#"(?i)\(\s*(['"]){SECRET_NAME}(['"])\s*,\s*(['"])([^'"\n]{{8,}})(['"])"#))
        .expect("valid")
});

/// An XML attribute pair whose key says secret, as NuGet's config writes a
/// password: `<add key="ClearTextPassword" value="…" />`.
static KEY_VALUE_ATTRIBUTES: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(&format!(r#"(?i)\bkey\s*=\s*"{SECRET_NAME}"\s+value\s*=\s*"([^"\n]{{8,}})""#))
        .expect("valid")
});

/// Unquoted `NAME=value` (shell, `.env`).
static ENV_ASSIGNMENT: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"(?i)^\s*(?:export\s+)?([A-Z0-9_]*(?:PASSWORD|PASSWD|SECRET|TOKEN|API_?KEY|ACCESS_?KEY|PRIVATE_?KEY)[A-Z0-9_]*)\s*=\s*([^\s'\x22#()\[\]{},;]{12,})\s*$",
    )
    .expect("valid")
});

/// The name part of [`ASSIGNMENT`]: says secret (`pass` only as a word of it:
/// `db_pass`, not `bypass`).
const SECRET_NAME: &str = r"(?:[A-Za-z0-9_.\-]*(?:password|passwd|pwd|secret|token|api[_\-]?key|apikey|access[_\-]?key|private[_\-]?key|client[_\-]?secret|auth[_\-]?key|credential)[A-Za-z0-9_.\-]*|(?:[A-Za-z0-9_.\-]*[_.\-])?pass(?:[_.\-][A-Za-z0-9_.\-]*)?)";

/// An unquoted value after a secret name anywhere in a line (YAML, INI,
/// properties, `:=`): `db_pass: 9fK2mZq7Lp0x`, `api_key := 1f0c...`.
static UNQUOTED_ASSIGNMENT: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(&format!(
        r#"(?i)(?:^|[\s{{,;(])["']?{SECRET_NAME}["']?\s*(?::{{1,3}}=|[?+]=|=|:)\s*([^\s'"`#()\[\]{{}},;<>]{{12,}})(?:[\s,;]|$)"#
    ))
    .expect("valid")
});

/// A secret-named variable compared with a literal: `if (api_key == "…")`,
/// `if ("…" === password)`.
static COMPARISON: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(&format!(
        r#"(?i)(?:\b{SECRET_NAME}\s*(?:===?|!==?)\s*(['"`])([^'"`\n]{{8,200}})(['"`])|(['"`])([^'"`\n]{{8,200}})(['"`])\s*(?:===?|!==?)\s*{SECRET_NAME}\b)"#
    ))
    .expect("valid")
});

/// A command-line flag that takes a secret: `--api-key VALUE`, `--password=VALUE`.
static FLAG: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r#"(?i)(?:^|\s)--?[a-z0-9\-]*(?:password|passwd|secret|token|api-?key)[ =]["']?([^\s'"]{12,200})"#,
    )
    .expect("valid")
});

/// An authorization header given to curl: `-H "Authorization: Bearer …"`,
/// `--header 'X-Api-Key: …'`.
static CURL_HEADER: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r#"(?i)(?:^|\s)(?:-H|--header)\s+['"](?:authorization|proxy-authorization|[a-z\-]*(?:api-?key|api-?token|token|secret))\s*:\s*(?:(basic)\s+|(?:bearer|token|api-token|apikey)\s+)?([A-Za-z0-9+/=~._\-]{8,})['"]"#,
    )
    .expect("valid")
});

/// A name whose last word is `key` (`account_key`, `AccountKey`,
/// `storageAccountKey`, `KEY`, `Key`) given a quoted literal: `key` alone is a
/// weaker sign than `token` or `secret` (`cache_key`, `sort_key`), so the value
/// must pass [`looks_key_value`] and the name [`key_name`].
static KEY_ASSIGNMENT: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(&format!(
        r#"(?:^|[^A-Za-z0-9_.\-])['"]?([A-Za-z0-9_.\-]*(?:key|Key|KEY))['"]?\]?\s*{ASSIGN_OP}\s*(?:[bru@]{{0,2}})(['"`])([^'"`\n]{{16,}})(['"`])"#
    ))
    .expect("valid")
});

/// The same name given an unquoted value (YAML, INI, `.env`, a log line).
static KEY_UNQUOTED: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r#"(?:^|[\s{,;(\[])['"]?([A-Za-z0-9_.\-]*(?:key|Key|KEY))['"]?\s*(?::=|=|:)\s*([^\s'"`#()\[\]{},;<>]{16,})(?:[\s,;]|$)"#,
    )
    .expect("valid")
});

/// A key name and a literal as a call's or an initializer's first two
/// arguments: `Add("AccountKey", "…")`, `{ "AccountKey", "…" }`.
static KEY_SETTER: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r#"[({]\s*(['"])([A-Za-z0-9_.\-]*(?:key|Key|KEY))(['"])\s*,\s*(['"])([^'"\n]{16,})(['"])"#,
    )
    .expect("valid")
});

/// A secret in a URL's query: `?api_key=…`, `&key=…`, `?auth_token=…`.
static QUERY_SECRET: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r#"(?i)[?&](?:api[_\-]?key|apikey|key|license[_\-]?key|(?:access|refresh)[_\-]?token|auth[_\-]?token|api[_\-]?token|token|tokenkey|client[_\-]?secret|secret|password)=([^&\s'"`#<>]{16,})"#,
    )
    .expect("valid")
});

/// `sv=2023-01-03` in an Azure SAS URL or token.
static AZURE_SAS_VERSION: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"(?:^|[?&])sv=\d{4}-\d{2}-\d{2}(?:&|$)").expect("valid"));

/// Its signature, `sig=` and base64 (URL-encoded or not) of an HMAC-SHA256.
static AZURE_SAS_SIG: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?:^|[?&])sig=((?:[A-Za-z0-9+/]|%[0-9A-Fa-f]{2}){40,}={0,2})").expect("valid")
});

/// A one-line XML element whose name says secret: `<password>…</password>`,
/// `<account_key>…</account_key>`.
static ELEMENT: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"<([A-Za-z_][A-Za-z0-9_.\-]*)(?:\s[^<>]*)?>([^<>\n]{8,})</([A-Za-z_][A-Za-z0-9_.\-]*)>",
    )
    .expect("valid")
});

/// The whole of a name that says secret ([`SECRET_NAME`]).
static SECRET_NAME_ONLY: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(&format!("(?i)^{SECRET_NAME}$")).expect("valid"));

/// A Docker `config.json` credential: `"auth": "…"`, base64 of `user:password`.
static DOCKER_AUTH: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r#""auth"\s*:\s*"([A-Za-z0-9+/]{8,}={0,2})""#).expect("valid"));

/// Well-formed templates: `${NAME}`, `${NAME:-default}`, `{{ name }}`,
/// `%(name)s`, `$(command)`, `<your-key>`.
static TEMPLATE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"\$\{[A-Za-z_][A-Za-z0-9_.]*(?:[:?+\-=][^}]*)?\}|\{\{[^}]*\}\}|%\([A-Za-z_][A-Za-z0-9_]*\)[sdr]|\$\([^)]*\)|<[^<>]*>|^\$[A-Za-z_][A-Za-z0-9_]*$",
    )
    .expect("valid")
});

/// Providers whose keys have no fixed prefix (`providers.txt`, one lowercase
/// name a line), matched on the lowercased line: the longest name first.
static PROVIDER: LazyLock<Regex> = LazyLock::new(|| {
    let mut names: Vec<&str> = include_str!("providers.txt")
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .collect();
    names.sort_by_key(|n| std::cmp::Reverse(n.len()));
    let names: Vec<String> = names.iter().map(|n| regex::escape(n)).collect();
    Regex::new(&names.join("|")).expect("valid")
});

/// A run of characters a key is written in (base64, base64url, hex, ids).
static KEY_RUN: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"[A-Za-z0-9_\-+/]+=*").expect("valid"));

/// How far after a provider's name its key may start (as trufflehog's
/// `PrefixRegex`: the name, then up to 40 characters).
const PROVIDER_WINDOW: usize = 40;

/// A credential close after a provider's name on the line (`mailgun token =
/// '…'`, `[INFO] using sendgrid key …`, `{agora …}`): the name standing as a
/// word of its own (`mailgun`, `MAILGUN_KEY`, `mailgunKey`, `mailgunkey`; not
/// `mirror` for `miro`), then, starting within 40 characters, a run of 20 characters or
/// more standing alone (blanks, quotes or punctuation around it, not part of a
/// URL, a path or a host) that passes [`looks_key_value`]: a digit and a
/// letter, near random entropy, not a UUID, filler, a sequence or a
/// placeholder. Not a checksum (`h1:…`, `sha512-…`), and not 40 or 64
/// characters of hex on a line that speaks of commits or hashes.
fn provider_secrets(line: &str) -> Vec<(usize, usize)> {
    static HASHY: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r"(?i)commit|sha|hash|\brev|checksum|digest|integrity|\bgit\b|\.git|@v")
            .expect("valid")
    });
    let mut out = Vec::new();
    let lower = line.to_ascii_lowercase();
    let b = line.as_bytes();
    for m in PROVIDER.find_iter(&lower) {
        if m.start() > 0 && b[m.start() - 1].is_ascii_alphanumeric() {
            continue;
        }
        // `mailgunkey`, `portainertoken`: a secret word run on.
        let suffix = ["apikey", "api", "key", "token", "secret"]
            .iter()
            .find(|w| lower[m.end()..].starts_with(**w))
            .map_or(0, |w| w.len());
        if let Some(&next) = b.get(m.end())
            && next.is_ascii_alphanumeric()
            && !(b[m.end() - 1].is_ascii_lowercase() && next.is_ascii_uppercase())
            && (suffix == 0 || b.get(m.end() + suffix).is_some_and(u8::is_ascii_lowercase))
        {
            continue;
        }
        let window_end = (m.end() + PROVIDER_WINDOW).min(line.len());
        for t in KEY_RUN.find_iter(&line[m.end()..]) {
            let (s, e) = (m.end() + t.start(), m.end() + t.end());
            if s >= window_end {
                break;
            }
            let before = line[..s].chars().next_back();
            let after = line[e..].chars().next();
            let opens = before.is_none_or(|c| c.is_whitespace() || "'\"`=:{([,|>\\".contains(c));
            let closes = after.is_none_or(|c| c.is_whitespace() || "'\"`;,})]<|\\".contains(c))
                || (after == Some('.')
                    && line[e + 1..].chars().next().is_none_or(char::is_whitespace));
            let v = &line[s..e];
            let hex = v.bytes().all(|c| c.is_ascii_hexdigit());
            if v.len() >= 20
                && opens
                && closes
                && !line[..s].ends_with("h1:")
                && !v.to_ascii_lowercase().starts_with("sha")
                && v.chars().any(|c| c.is_ascii_alphabetic())
                && !(hex && (v.len() == 40 || v.len() == 64) && HASHY.is_match(line))
                && looks_key_value(v)
            {
                out.push((s, e));
            }
        }
    }
    out
}

const ALLOW_MARKERS: &[&str] =
    &["ironbees:allow-secret", "gitleaks:allow", "pragma: allowlist secret"];

/// Words of placeholder values: no one commits a real secret containing them.
const PLACEHOLDERS: &[&str] = &[
    "example",
    "changeme",
    "change_me",
    "change-me",
    "your",
    "placeholder",
    "dummy",
    "sample",
    "xxxx",
    "****",
    "....",
    "todo",
    "fixme",
    "redacted",
    "secret123",
    "password123",
    "test",
    "fake",
    "mock",
    "foobar",
    "insert",
    "replace",
    "notreal",
    "not-real",
    "process.env",
    "os.environ",
    "getenv",
    "env(",
    "env[",
    "config.",
    "settings.",
];

/// Shannon entropy of the characters, in bits per character.
fn entropy(s: &str) -> f64 {
    let mut counts = std::collections::HashMap::new();
    let mut n = 0usize;
    for c in s.chars() {
        *counts.entry(c).or_insert(0usize) += 1;
        n += 1;
    }
    if n == 0 {
        return 0.0;
    }
    counts
        .values()
        .map(|&k| {
            let p = k as f64 / n as f64;
            -p * p.log2()
        })
        .sum()
}

/// A run of six or more of one character (`ghp_xxxxxx…`, `AKIAZZZZZZ…`,
/// `000000`), or one chunk of three to eight characters three times over
/// (`…EXAMPLEEXAMPLEEXAMPLE…`): a placeholder in a real format's shape, which
/// a generated key all but never has.
fn filler(s: &str) -> bool {
    let mut run = 0;
    let mut prev = None;
    for c in s.chars() {
        run = if Some(c) == prev { run + 1 } else { 1 };
        prev = Some(c);
        if run >= 6 {
            return true;
        }
    }
    let b = s.as_bytes();
    (3..=8).any(|k| {
        (0..b.len().saturating_sub(3 * k - 1))
            .any(|i| b[i..i + k] == b[i + k..i + 2 * k] && b[i..i + k] == b[i + 2 * k..i + 3 * k])
    })
}

/// An unquoted value is read as code too, so it must also not look like a
/// reference (`d.cfg.AccessKey`, `self.token`) and, like nearly every
/// generated key, have a digit.
fn looks_secret_unquoted(value: &str) -> bool {
    static PATH: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r"^[A-Za-z_$][A-Za-z0-9_$]*(?:(?:\.|::|->)[A-Za-z_$][A-Za-z0-9_$]*)+$")
            .expect("valid")
    });
    value.chars().any(|c| c.is_ascii_digit()) && !PATH.is_match(value) && looks_secret(value)
}

/// Whether a name ending in `key` names a secret: its last word is `key`
/// (`account_key`, `storageAccountKey`, `KEY`), and it is not a public key, a
/// site key, or a database, cache or sort key.
fn key_name(name: &str) -> bool {
    let lower = name.to_ascii_lowercase();
    if !lower.ends_with("key") {
        return false;
    }
    let stem = &name[..name.len() - 3];
    let word = stem.is_empty()
        || stem.ends_with(['_', '.', '-'])
        || (name.ends_with("Key")
            && stem.ends_with(|c: char| c.is_ascii_lowercase() || c.is_ascii_digit()))
        || (name.ends_with("KEY")
            && stem.chars().all(|c| !c.is_ascii_lowercase())
            && stem.ends_with(['_', '.', '-']));
    const NOT: &[&str] = &[
        "public",
        "publishable",
        "pub_",
        "pub-",
        "site",
        "primary",
        "foreign",
        "sort",
        "partition",
        "cache",
        "idempotency",
        "lookup",
        "unique",
        "composite",
        "dedup",
        "translation",
        "label",
        "i18n",
        "hot",
        "short",
        "map",
        "dict",
        "row",
        "column",
        "object",
        "routing",
        "group",
    ];
    word && !NOT.iter().any(|w| lower.contains(w))
}

/// A value given to a `…key` name: a secret by [`looks_secret`], at least 16
/// characters with a digit and 3.5 bits of entropy per character, and not an
/// id (a UUID), a public key (`pk_…`, `pub-…`, New Relic's browser
/// `NRJS-…`), a file (`keys/server.pem`), a
/// URL, filler (see [`filler`]) or a run of six in sequence (`abcdef`,
/// `123456`, as in `sk_abcdefghijklmnopqrstuvwxyz123`).
fn looks_key_value(value: &str) -> bool {
    static NOT: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r"(?i)^(?:[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}|pk[_\-].*|pub-.*|nrjs-.*|.*/.*\.[a-z0-9]{1,4}|[a-z]+://.*)$")
            .expect("valid")
    });
    let b = value.as_bytes();
    let sequence = b
        .windows(6)
        .any(|w| w.iter().all(u8::is_ascii_alphanumeric) && w.windows(2).all(|p| p[1] == p[0] + 1));
    // A value that names itself (`storageaccountkeybase64encoded`) is a
    // placeholder.
    let lower = value.to_ascii_lowercase();
    value.len() >= 16
        && !["key", "secret", "token", "password"].iter().any(|w| lower.contains(w))
        && value.chars().any(|c| c.is_ascii_digit())
        && entropy(value) >= 3.5
        && !sequence
        && !filler(value)
        && !NOT.is_match(value)
        && looks_secret(value)
}

/// A password decoded from `user:password`: not a placeholder (`pass`,
/// `my_password`, `changeme`): six characters or more, not a lowercase word
/// or words, no placeholder word.
fn plausible_password(p: &str) -> bool {
    let lower = p.to_ascii_lowercase();
    p.len() >= 6
        && !p.chars().all(|c| c.is_ascii_lowercase() || c == '_' || c == '-')
        && !PLACEHOLDERS.iter().any(|w| lower.contains(w))
        && !lower.contains("pass")
}

/// Whether a name that says secret names its value rather than an id, a name,
/// a path or a URL of it (`UserSecretsId`, `tokenUrl`, `secret_name`).
fn names_value(name: &str) -> bool {
    static NOT: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r"(?:Ids?|IDS?|Name|NAME|Path|PATH|File|FILE|Url|URL|Uri|URI|Type|TYPE|Ref|REF|_ids?|_name|_path|_file|_url|_uri|_type|_ref|-ids?|-name|-path|-file|-url|-uri|-type|-ref)$")
            .expect("valid")
    });
    !NOT.is_match(name)
}

/// The secret inside an assigned literal: blanks around it trimmed, and an
/// HTTP authorization scheme (`Bearer …`, `Token …`, `Basic …`) taken off.
fn literal_value(line: &str, start: usize, end: usize) -> (usize, usize) {
    static SCHEME: LazyLock<Regex> =
        LazyLock::new(|| Regex::new(r"(?i)^(?:bearer|token|basic)\s+").expect("valid"));
    let raw = &line[start..end];
    let s = start + (raw.len() - raw.trim_start().len());
    let e = start + raw.trim_end().len();
    let s = s.min(e);
    match SCHEME.find(&line[s..e]) {
        Some(m) => (s + m.end(), e),
        None => (s, e),
    }
}

/// Whether a literal given to a secret-named variable looks like a real secret.
fn looks_secret(value: &str) -> bool {
    // `sk_test_…`: a test-mode secret key (Stripe, Checkout.com), not a test value.
    let lower = value.to_ascii_lowercase();
    let lower = lower.strip_prefix("sk_test_").unwrap_or(&lower);
    // Up to 4,096 characters (OAuth refresh tokens, macaroons), not a whole
    // minified file.
    if value.len() > 4096
        || PLACEHOLDERS.iter().any(|p| lower.contains(p))
        || TEMPLATE.is_match(value)
    {
        return false;
    }
    // Prose, paths and identifiers are not keys: a secret has no spaces, and
    // mixes character classes.
    if value.contains(' ') || value.starts_with('/') || value.starts_with("./") {
        return false;
    }
    // Words joined by separators (`django-insecure-dev-only`, `my_app_secret`,
    // `PYBIND11_TYPE_CASTER-like`: a word may end in digits) are a name someone
    // typed, not a generated key.
    if value.split(['-', '_', '.', ':']).all(|w| {
        let letters = w.trim_end_matches(|c: char| c.is_ascii_digit());
        letters.len() * 2 >= w.len()
            && (letters.chars().all(|c| c.is_ascii_lowercase())
                || letters.chars().all(|c| c.is_ascii_uppercase()))
    }) {
        return false;
    }
    let classes = [
        value.chars().any(|c| c.is_ascii_lowercase()),
        value.chars().any(|c| c.is_ascii_uppercase()),
        value.chars().any(|c| c.is_ascii_digit()),
        value.chars().any(|c| !c.is_ascii_alphanumeric()),
    ]
    .iter()
    .filter(|b| **b)
    .count();
    // Hex: 32 characters and more, or 20 and more with both digits and
    // letters and near the entropy of random hex.
    let hex = value.chars().all(|c| c.is_ascii_hexdigit())
        && (value.len() >= 32
            || (value.len() >= 20
                && value.chars().any(|c| c.is_ascii_digit())
                && value.chars().any(|c| c.is_ascii_alphabetic())
                && entropy(value) >= 3.2));
    hex || (classes >= 3 && entropy(value) >= 3.0) || (classes >= 2 && entropy(value) >= 3.7)
}

/// The secrets on one line.
pub fn find_secrets(line: &str) -> Vec<Secret> {
    if ALLOW_MARKERS.iter().any(|m| line.contains(m)) {
        return Vec::new();
    }
    let mut out = scan(line);
    // A file inside a string (`{"config.ini": "API_TOKEN=…\nDEBUG=1"}`,
    // `"line": "token = \"…\";"`): each escaped line read as a line of its own.
    if line.contains("\\n") || line.contains("\\\"") {
        for part in line.split("\\n").flat_map(|p| p.split("\\r")).flat_map(|p| p.split("\\t")) {
            let part = part.replace("\\\"", "\"").replace("\\'", "'");
            for s in scan(&part) {
                let Some(start) = line.find(&part[s.start..s.end]) else { continue };
                let end = start + (s.end - s.start);
                if !out.iter().any(|o| o.start < end && start < o.end) {
                    out.push(Secret { kind: s.kind, start, end });
                }
            }
        }
        out.sort_by_key(|s| s.start);
    }
    out
}

/// A secret-named XML element whose value is on a line of its own:
/// `<password>`, `value`, `</password>` (the value line's secret).
pub fn find_secret_in_element(open: &str, value: &str, close: &str) -> Option<Secret> {
    static OPEN: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(&format!(r"(?i)^\s*<({SECRET_NAME})(?:\s[^<>]*)?>\s*$")).expect("valid")
    });
    static CLOSE: LazyLock<Regex> =
        LazyLock::new(|| Regex::new(r"^\s*</([^<>\s]+)>\s*$").expect("valid"));
    static VALUE: LazyLock<Regex> =
        LazyLock::new(|| Regex::new(r"^\s*([^\s<>]{8,200})\s*$").expect("valid"));
    if ALLOW_MARKERS.iter().any(|m| value.contains(m)) {
        return None;
    }
    let name = OPEN.captures(open)?.get(1)?.as_str();
    if CLOSE.captures(close)?.get(1)?.as_str() != name {
        return None;
    }
    let v = VALUE.captures(value)?.get(1)?;
    looks_secret(v.as_str()).then(|| Secret {
        kind: "secret in an XML element",
        start: v.start(),
        end: v.end(),
    })
}

/// A secret-named assignment whose literal is on the next line:
/// `const apiKey =` then `  "…";`, or `String ACCOUNT_KEY` then `  = "…";`
/// (the value line's secret).
pub fn find_secret_after_name(name_line: &str, value_line: &str) -> Option<Secret> {
    static NAME: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r"([A-Za-z_][A-Za-z0-9_.\-]*)['\x22]?\s*(:=|=|:|=>)?\s*$").expect("valid")
    });
    static VALUE: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r#"^\s*(=\s*)?(['"`])([^'"`\n]{8,})(['"`])\s*[;,]?\s*(?://.*|#.*)?$"#)
            .expect("valid")
    });
    if ALLOW_MARKERS.iter().any(|m| value_line.contains(m) || name_line.contains(m)) {
        return None;
    }
    let n = NAME.captures(name_line)?;
    let name = n.get(1)?.as_str();
    let c = VALUE.captures(value_line)?;
    let (open, v, close) = (c.get(2)?, c.get(3)?, c.get(4)?);
    // One operator: at the end of the name's line or before the literal.
    if open.as_str() != close.as_str() || n.get(2).is_some() == c.get(1).is_some() {
        return None;
    }
    let (s, e) = literal_value(value_line, v.start(), v.end());
    secret_of_name(name, &value_line[s..e]).then_some(Secret {
        kind: "secret assigned in code",
        start: s,
        end: e,
    })
}

/// Whether `value`, given to `name` (an XML element, a variable on the line
/// before), is its secret: a name that says secret and a value that looks like
/// one, or a `…key` name and a value past the stricter `…key` bar; never a
/// name of an id, a path or a URL.
fn secret_of_name(name: &str, value: &str) -> bool {
    if !names_value(name) {
        false
    } else if SECRET_NAME_ONLY.is_match(name) {
        looks_secret(value)
    } else {
        key_name(name) && looks_key_value(value)
    }
}

/// The evidence on one line, without the allow markers and escapes.
fn scan(line: &str) -> Vec<Secret> {
    let mut out: Vec<Secret> = Vec::new();
    let mut push = |kind, start, end| {
        if !out.iter().any(|s: &Secret| s.start < end && start < s.end) {
            out.push(Secret { kind, start, end });
        }
    };
    for f in FORMATS.iter() {
        for c in f.regex.captures_iter(line) {
            if let Some(m) = c.get(f.group)
                && !filler(&m.as_str().replacen("AAAAAAAAAA", "", 1))
            {
                push(f.kind, m.start(), m.end());
            }
        }
    }
    for c in JWT.captures_iter(line) {
        if let (Some(m), Some(h), Some(p)) = (c.get(0), c.get(1), c.get(2))
            && is_json_object_b64(h.as_str())
            && is_json_object_b64(p.as_str())
        {
            push("JSON web token", m.start(), m.end());
        }
    }
    for c in URL_PASSWORD.captures_iter(line) {
        if let Some(m) = c.get(1)
            && looks_secret(m.as_str())
        {
            push("password in a URL", m.start(), m.end());
        }
    }
    for c in ASSIGNMENT.captures_iter(line) {
        let (Some(value), Some(open), Some(close)) = (c.get(3), c.get(2), c.get(4)) else {
            continue;
        };
        let (s, e) = literal_value(line, value.start(), value.end());
        if open.as_str() == close.as_str() && looks_secret(&line[s..e]) {
            push("secret assigned in code", s, e);
        }
    }
    for c in KEY_ASSIGNMENT.captures_iter(line) {
        let (Some(name), Some(open), Some(value), Some(close)) =
            (c.get(1), c.get(2), c.get(3), c.get(4))
        else {
            continue;
        };
        let (s, e) = literal_value(line, value.start(), value.end());
        // `<entry key="…" value="…">`: an attribute named `key` is a map's key.
        let attribute =
            name.as_str().eq_ignore_ascii_case("key") && line[..name.start()].contains('<');
        if open.as_str() == close.as_str()
            && !attribute
            && key_name(name.as_str())
            && looks_key_value(&line[s..e])
        {
            push("secret assigned in code", s, e);
        }
    }
    for c in KEY_SETTER.captures_iter(line) {
        let (Some(o1), Some(name), Some(c1), Some(open), Some(value), Some(close)) =
            (c.get(1), c.get(2), c.get(3), c.get(4), c.get(5), c.get(6))
        else {
            continue;
        };
        let (s, e) = literal_value(line, value.start(), value.end());
        if o1.as_str() == c1.as_str()
            && open.as_str() == close.as_str()
            && key_name(name.as_str())
            && looks_key_value(&line[s..e])
        {
            push("secret assigned in code", s, e);
        }
    }
    for c in KEY_UNQUOTED.captures_iter(line) {
        if let (Some(name), Some(value)) = (c.get(1), c.get(2))
            && key_name(name.as_str())
            && looks_key_value(value.as_str())
            && looks_secret_unquoted(value.as_str())
        {
            push("secret assigned in code", value.start(), value.end());
        }
    }
    for c in QUERY_SECRET.captures_iter(line) {
        if let Some(value) = c.get(1)
            && looks_secret_unquoted(value.as_str())
        {
            push("secret in a URL", value.start(), value.end());
        }
    }
    // An Azure shared access signature: a `sig` beside the signed version.
    if AZURE_SAS_VERSION.is_match(line) {
        for c in AZURE_SAS_SIG.captures_iter(line) {
            if let Some(value) = c.get(1) {
                push("Azure SAS token", value.start(), value.end());
            }
        }
    }
    for c in ELEMENT.captures_iter(line) {
        let (Some(open), Some(value), Some(close)) = (c.get(1), c.get(2), c.get(3)) else {
            continue;
        };
        let (s, e) = literal_value(line, value.start(), value.end());
        let v = &line[s..e];
        let v = v.strip_prefix('{').and_then(|v| v.strip_suffix('}')).unwrap_or(v);
        if open.as_str() == close.as_str() && secret_of_name(open.as_str(), v) {
            push("secret in an XML element", s, e);
        }
    }
    for c in DOCKER_AUTH.captures_iter(line) {
        if let Some(value) = c.get(1)
            && base64_decode(value.as_str()).is_some_and(|b| {
                b.iter().all(|c| (0x20..0x7f).contains(c) || b"\n\r\t".contains(c))
                    && b.iter().position(|&c| c == b':').is_some_and(|i| {
                        i > 0 && plausible_password(&String::from_utf8_lossy(&b[i + 1..]))
                    })
            })
        {
            push("Docker registry credentials", value.start(), value.end());
        }
    }
    for c in SETTER.captures_iter(line) {
        let (Some(o1), Some(c1), Some(open), Some(value), Some(close)) =
            (c.get(1), c.get(2), c.get(3), c.get(4), c.get(5))
        else {
            continue;
        };
        if o1.as_str() == c1.as_str()
            && open.as_str() == close.as_str()
            && looks_secret(value.as_str())
        {
            push("secret assigned in code", value.start(), value.end());
        }
    }
    for c in KEY_VALUE_ATTRIBUTES.captures_iter(line) {
        if let Some(value) = c.get(1)
            && looks_secret(value.as_str())
        {
            push("secret assigned in code", value.start(), value.end());
        }
    }
    if let Some(c) = ENV_ASSIGNMENT.captures(line)
        && let Some(value) = c.get(2)
        && looks_secret(value.as_str())
    {
        push("secret in an environment file", value.start(), value.end());
    }
    for c in COMPARISON.captures_iter(line) {
        let value = match (c.get(1), c.get(2), c.get(3), c.get(4), c.get(5), c.get(6)) {
            (Some(o), Some(v), Some(e), ..) | (.., Some(o), Some(v), Some(e))
                if o.as_str() == e.as_str() =>
            {
                v
            }
            _ => continue,
        };
        if looks_secret(value.as_str()) {
            push("secret compared in code", value.start(), value.end());
        }
    }
    for c in UNQUOTED_ASSIGNMENT.captures_iter(line) {
        if let Some(value) = c.get(1)
            && looks_secret_unquoted(value.as_str())
        {
            push("secret assigned in code", value.start(), value.end());
        }
    }
    for c in CURL_HEADER.captures_iter(line) {
        let Some(value) = c.get(2) else { continue };
        let v = value.as_str();
        let ok = if c.get(1).is_some() {
            // Basic: base64 of `user:password`.
            base64_decode(v).is_some_and(|b| b.contains(&b':'))
        } else {
            v.chars().any(|c| c.is_ascii_digit())
                && !PLACEHOLDERS.iter().any(|p| v.to_ascii_lowercase().contains(p))
                && !filler(v)
        };
        if ok {
            push("secret in an HTTP header", value.start(), value.end());
        }
    }
    for c in FLAG.captures_iter(line) {
        if let Some(value) = c.get(1)
            && looks_secret_unquoted(value.as_str())
        {
            push("secret on a command line", value.start(), value.end());
        }
    }
    for (s, e) in provider_secrets(line) {
        push("secret near a provider's name", s, e);
    }
    out.sort_by_key(|s| s.start);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Real formats are found; ordinary code that talks about passwords is not.
    #[test]
    fn secrets_by_format_and_by_value() {
        let found: &[(&str, &str)] = &[
            ("aws_access_key_id = AKIAIOSFODNN7EXAMPLE", "AWS access key"),
            ("const t = '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';", "GitHub token"),
            ("SLACK = 'xoxb-2934927401-2934927401-abcdefghijkl'", "Slack token"),
            ("stripe.api_key = \"sk_live_4eC39HqLyjWDarjtT1zdp7dc\"", "Stripe key"),
            ("key = \"AIzaSyD-9tSrke72PouQMnMX-a7eZSW0jkFMBWY\"", "Google API key"),
            ("-----BEGIN RSA PRIVATE KEY-----", "private key"),
            (
                "DATABASE_URL = \"postgres://app:Zx9#kP2vLq7@db.internal:5432/app\"",
                "password in a URL",
            ),
            ("client_secret = \"8f14e45fceea167a5a36dedd4bea2543\"", "secret assigned in code"),
            ("    \"password\": \"Tr0ub4dor&3xQ9!kz\",", "secret assigned in code"),
            ("API_TOKEN=9fK2mZq7Lp0xRt4vBn8wYc3s", "secret in an environment file"),
            // Separators between parts that are not typed words.
            ("api_token = \"Ab3dE9_kQ2mX7pL_zR8vN4\"", "secret assigned in code"),
        ];
        for (line, kind) in found {
            let s = find_secrets(line);
            assert_eq!(s.first().map(|s| s.kind), Some(*kind), "{line}: {s:?}");
        }
        let clean = [
            "password = request.form['password']",
            "if not check_password(user, password): raise Unauthorized",
            "PASSWORD_MIN_LENGTH = 12",
            "api_key = os.environ[\"API_KEY\"]",
            "token = get_token()",
            "secret = \"changeme-in-production\"",
            "password = \"<your-password>\"",
            "AWS_SECRET_ACCESS_KEY = \"${AWS_SECRET_ACCESS_KEY}\"",
            "# the password must contain a digit",
            "let token_count = tokens.len();",
            "url = \"https://user@example.com/path\"",
            "password_field = forms.CharField(widget=forms.PasswordInput)",
            "aws_access_key_id = AKIAIOSFODNN7EXAMPLE  # gitleaks:allow",
            "secret_key = \"django-insecure-dev-only\"",
            "TOKEN_URL = \"/oauth/token\"",
            // Words that end in digits are still typed words.
            "the tokens: PYBIND11_TYPE_CASTER-like members in a class",
            "LLM_SECRET_NAME = \"NEXUS-GPT4-API-KEY\"",
        ];
        for line in clean {
            assert!(find_secrets(line).is_empty(), "{line}: {:?}", find_secrets(line));
        }
    }

    /// Formats added for issue 34's benchmark, and the heuristics around them.
    #[test]
    fn more_formats_unquoted_values_comparisons_and_flags() {
        let found: &[(&str, &str)] = &[
            ("token = \"7213808860:AAH1bjqpKKW3maRSPAxzIU-0v6xNuq2-NjM\"", "Telegram bot token"),
            (
                "https://api.telegram.org/bot110201543:AAHdqTcvCH1vGWJxfSe1ofSAs0K5PALDsaw/getMe",
                "Telegram bot token",
            ),
            (
                "DISCORD = 'MTk4NjIyNDgzNDcxOTI1MjQ4.Cl2FMQ.ZnCjm1XVW7vRze4b7Cq4se7kKWs'",
                "Discord bot token",
            ),
            ("mc = '343ea45721923ed956e2b38c31db76aa-us30'", "Mailchimp key"),
            (
                "AccountKey=lJzRc1YdHaAA2KCNJJ1tkYwF/+mKK6Ygw0NGe170Xu592euJv2wYUtBlV8z+qnlcNQSnIYVTkLWntUO1F8j8rQ==",
                "Azure storage key",
            ),
            ("//registry.npmjs.org/:_authToken=346a14f2-a672-4668-a892-956a462ab56e", "npm token"),
            ("runner: glrt-2CR8_eVxiioB1QmzPZwa", "GitLab token"),
            ("t = 'glptt-0123456789abcdefABCDEF0123456789abcdefAB'", "GitLab token"),
            (
                "eyJ0eXAiOiJKV1QiLCJhbGciOiJIUzI1NiJ9.eyJuYW1lIjoiSm9lIiwKInN0YXR1cyI6ImVtcGxveWVlIgp9",
                "JSON web token",
            ),
            ("  db_pass: 9fK2mZq7Lp0xRt4v", "secret assigned in code"),
            ("softlayer_api_key := 1f0c9e8d7b6a5f4e3d2c1b0a9f8e7d6c", "secret assigned in code"),
            ("if (api_key == \"Zx9kP2vLq7Wm4Tn8\") {", "secret compared in code"),
            ("if (\"Zx9kP2vLq7Wm4Tn8\" !== password) {", "secret compared in code"),
            ("curl --api-key 9fK2mZq7Lp0xRt4vBn8w https://x", "secret on a command line"),
            ("password = @\"Tr0ub4dor&3xQ9!kz\";", "secret assigned in code"),
            ("char secret[25] = \"Tr0ub4dor&3xQ9!kz\";", "secret assigned in code"),
        ];
        for (line, kind) in found {
            let s = find_secrets(line);
            assert_eq!(s.first().map(|s| s.kind), Some(*kind), "{line}: {s:?}");
        }
        let clean = [
            // Placeholders in a real format's shape.
            "key = AKIAXXXXXXXXXXXXXXXX",
            "token = 'ghp_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx'",
            // Wrong length for the kind of GitLab token.
            "glptt-hellOworld380_testin",
            // Not base64 JSON: not a JWT.
            "eyJhbasdGciOiJIUaddasdasfsasdasdzI1NiIasdsInR5cCI6IkpXVCasdJasd9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.abc",
            // A short PyPI-looking prefix is not a macaroon.
            "pypi-AgEIcHlwaS5vcmcCJDU3OTM1MjliLWIyYTYtNDEwOC05NzRkLTM0MjNiNmEwNWIzYg",
            // Unquoted references, templates and words.
            "\t\tAccessKey: d.cfg.AccessKey,",
            "api_key: ${API_KEY}",
            "password: ${DB_PASSWORD:-postgres}",
            "secret_key = {{ vault_secret_key }}",
            "token: Optional[str] = None",
            "bypass: aVeryLongIdentifierName",
            "if (password == confirm_password) {",
            "--password-file /run/secrets/db_password",
        ];
        for line in clean {
            assert!(find_secrets(line).is_empty(), "{line}: {:?}", find_secrets(line));
        }
    }

    /// Round two (issue 34): provider formats by their documented prefixes and
    /// lengths, and the ways of writing an assignment G002 did not read.
    #[test]
    fn round_two_formats_and_assignment_shapes() {
        let found: &[(&str, &str)] = &[
            ("STRIPE = 'sk_test_4eC39HqLyjWDarjtT1zdp7dc'", "Stripe key"),
            ("k = shippo_live_ae6ea549b877878c15ce9314b4f83005dad4dced", "Shippo token"),
            ("duffel_test_11jszx0=hgi9b8p6orpk_u14doufymc=hbzj7d0zf4m", "Duffel token"),
            ("FLY_API_TOKEN: fo1_MtiXtdvaSPAJpaz2qVZi4p_H1jdsZeNa1zVR_u4UWes", "Fly.io token"),
            ("HF_TOKEN=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 poetry run app", "Hugging Face token"),
            ("pscale_oauth_jmh2a5v3a4-3nt7=xi5a0exbv4wn6ahf9x0k2", "PlanetScale token"),
            ("LOB = 'test_7f8e6f0254b7fd84ee63f29c5d6d85ee6c9'", "Lob key"),
            ("sgp_AaD80dc6E02eCAE1_d3cba16CC0F18fA14A2EFB61CbDFceEBf9fAD16b", "Sourcegraph token"),
            ("sgp_local_d7dfFD43cF2503B1da673EB560aAa3e80f16FA42", "Sourcegraph token"),
            ("adobeClient := \"p8e-c12a15777349c6540fd94cb3938426f7\"", "Adobe client secret"),
            ("A3-ASWWYB-798JRY-LJVD4-23DC2-86TVM-H43EB", "1Password secret key"),
            (
                "AGE-SECRET-KEY-1QQPZRY9X8GF2TVDW0S3JN54KHCE6MUA7LQPZRY9X8GF2TVDW0S3JN54KHC",
                "age secret key",
            ),
            ("accessKeyId: LTAI5tQ2nG9hHk3Fx7pWmR1d", "Alibaba access key"),
            ("https://cafeb4b3:d3adb33f@enterprise.contribsys.com/", "Sidekiq credentials"),
            ("export BUNDLE_GEMS__CONTRIBSYS__COM=cafeb4b3:d3adb33f", "Sidekiq credentials"),
            ("NOTION = 'secret_9Fk2mZq7Lp0xRt4vBn8wYc3s6Hd1Jg5Qa2We7Rt0Yu3'", "Notion token"),
            (
                "https://acme.webhook.office.com/webhookb2/9f3c6a52-8f41-4d9e-a2b1-3c4d5e6f7a8b@0a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d/IncomingWebhook/0123456789abcdef0123456789abcdef/1a2b3c4d-5e6f-4a7b-8c9d-0e1f2a3b4c5d",
                "Microsoft Teams webhook",
            ),
            ("(QtT8Q~9C-_Ij~RouHVpD2Tuf3oHWGh.DQ3kcjbAn)", "Azure AD client secret"),
            ("Bearer sha256~kV46hPnEYhCWFnB85r5NrprAxggzgb6GOeLbgcKNsH0", "OpenShift token"),
            (
                "const KEY = \"HRKU-AAlQ1aVoHDujJ9QsDHdHlHO0hbzhoERRSO45ZQusSYHg_____w4_hLrAym_u\"",
                "Heroku key",
            ),
            ("AIzaSyNHxIf32IQ1a1yjl3ZJIqKZqzLAK1XhDk-", "Google API key"),
            ("FLW = 'FLWSECK_TEST-3019b11e63be2f87cb28fa5f3a63e3e5-X'", "Flutterwave key"),
            ("FLWSECK_TEST6cb8cb1cd3fe", "Flutterwave key"),
            ("asana: 1/1203915238441839:58f8de6d2b8d0c1e1f1e1b3e0b7c7a9d", "Asana token"),
            (
                "DROPBOX = 'k4jd82hs0q1AAAAAAAAAAd8s7fj3k2l0q9w8e7r6t5y4u3i2o1p0a9s8d7f6g5h4'",
                "Dropbox token",
            ),
            (
                "{\"type\": \"service_account\", \"project_id\": \"acme\", \"private_key_id\": \"3f8a1c0d9e7b6a5f4e3d2c1b0a9f8e7d6c5b4a39\"",
                "GCP service account key",
            ),
            // Assignment operators: Makefile, PHP, Go with a type, a key in brackets.
            ("API_TOKEN ?= \"9fK2mZq7Lp0xRt4vBn8wYc3s\"", "secret assigned in code"),
            ("API_TOKEN ::= \"9fK2mZq7Lp0xRt4vBn8wYc3s\"", "secret assigned in code"),
            ("API_TOKEN :::= \"9fK2mZq7Lp0xRt4vBn8wYc3s\"", "secret assigned in code"),
            ("API_TOKEN += 9fK2mZq7Lp0xRt4vBn8wYc3s", "secret assigned in code"),
            ("$apiToken .= \"9fK2mZq7Lp0xRt4vBn8wYc3s\"", "secret assigned in code"),
            ("var apiToken string = \"9fK2mZq7Lp0xRt4vBn8wYc3s\"", "secret assigned in code"),
            ("os.environ[\"API_TOKEN\"] = \"9fK2mZq7Lp0xRt4vBn8wYc3s\"", "secret assigned in code"),
            // Setter calls with a secret-named key.
            (
                "System.setProperty(\"API_TOKEN\", \"9fK2mZq7Lp0xRt4vBn8wYc3s\")",
                "secret assigned in code",
            ),
            (
                "os.environ.setdefault('DB_PASSWORD', 'Tr0ub4dor&3xQ9!kz')",
                "secret assigned in code",
            ),
            // NuGet's cleartext password.
            (
                "<add key=\"ClearTextPassword\" value=\"hal+9ooo_da!sY\" />",
                "secret assigned in code",
            ),
            // A file inside a string.
            (
                "{\"config.ini\": \"API_TOKEN=9fK2mZq7Lp0xRt4vBn8wYc3s\\nBACKUP_ENABLED=true\"}",
                "secret assigned in code",
            ),
            (
                "\"line\": \"client_secret = \\\"9fK2mZq7Lp0xRt4vBn8wYc3s\\\";\",",
                "secret assigned in code",
            ),
            // curl's authorization headers.
            (
                "curl -H \"Authorization: Bearer cfcabd11c7ed9a41b1a3e063c32d5114\" https://x",
                "secret in an HTTP header",
            ),
            ("curl -H 'Authorization: Basic YnJvd3Nlcjo=' \\", "secret in an HTTP header"),
            ("curl -X POST --header \"Api-Token: Sk94HG7f6KB\"", "secret in an HTTP header"),
        ];
        for (line, kind) in found {
            let s = find_secrets(line);
            assert_eq!(s.first().map(|s| s.kind), Some(*kind), "{line}: {s:?}");
        }
        let clean = [
            // Ordinary code about tokens and passwords.
            "System.setProperty(\"API_TOKEN\", System.getenv(\"API_TOKEN\"))",
            "os.environ[\"API_TOKEN\"] = token",
            "config.set(\"password\", \"\")",
            "TOKEN_FILE ?= \"/run/secrets/api_token\"",
            "PASSWORD ?= $(shell cat .password)",
            "$query .= \"token_type=bearer&grant=password\"",
            "headers = {\"Authorization\": f\"Bearer {token}\"}",
            "curl -H \"Authorization: Bearer $TOKEN\" https://api",
            "curl -H \"Authorization: Bearer <token>\" https://api",
            "curl -H 'Authorization: Basic YWxhZGRpbg==' https://api",
            "<input type=\"hidden\" name=\"authenticity_token\" value=\"7SWaFo1hsC6oovfBsJFLGPUl2\" />",
            "{\"msg\": \"set API_TOKEN=${API_TOKEN}\\nthen run\"}",
            "<add key=\"PasswordPolicy\" value=\"MinimumLength\" />",
            // Placeholders in a real format's shape.
            "ABSKQmVkcm9ja0FQSUtleS1EXAMPLEEXAMPLEEXAMPLEEXAMPLEEXAMPLEEXAMPLEEXM=",
            "sk_test_xxxxxxxxxxxxxxxxxxxxxxxx",
            "aaaaaaaaaaaAAAAAAAAAAaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
            "{\"type\": \"service_account\", \"private_key\": \"\"}",
            // Publishable keys are public.
            "FLWPUBK_TEST-3019b11e63be2f87cb28fa5f3a63e3e5-X",
            "pk_test_TYooMQauvdEDq54NiTphI7jx",
        ];
        for line in clean {
            assert!(find_secrets(line).is_empty(), "{line}: {:?}", find_secrets(line));
        }
    }

    /// Round 3 (trufflehog's detector tests as a fresh set, issue 34).
    #[test]
    fn round_three_key_names_urls_and_formats() {
        let found: &[(&str, &str)] = &[
            // A name whose last word is `key`, with a value that passes the
            // stricter bar.
            ("clarifai_key: \"u8jzPde0IgxLd6GncfBAepfJBd0Kh8oO\"", "secret assigned in code"),
            ("apiMaticKey := \"u8jzPde0IgxLd6GncfBAepfJBd0Kh8oO\"", "secret assigned in code"),
            (
                "public static final String DEFAULT_ACCOUNT_KEY = \"hYgCfrL1spNxnyVmihA/2O76UMFxFkM/R5Kjp1vRt+1fjORS/6ilI8ihN5KXSc7Tvo/hBKqFYY/kv5ZJr3J1TW==\";",
                "secret assigned in code",
            ),
            ("[DEBUG] Using Key=u8jzPde0IgxLd6GncfBAepfJBd0Kh8oO", "secret assigned in code"),
            ("  azure_key: u8jzPde0IgxLd6GncfBAepfJBd0Kh8oO", "secret assigned in code"),
            (
                "this.Context.Add(\"AccountKey\", \"hYgCfrL1spNxnyVmihA/2O76UMFxFkM/R5Kjp1vRt+1fjORS/6ilI8ihN5KXSc7Tvo/hBKqFYY/kv5ZJr3J1TW==\");",
                "secret assigned in code",
            ),
            // Blanks around the value, an authorization scheme before it.
            ("bitmexSecret := \" Oq9wMxEhh2FDEEtfjgVvVqE1SkHb \"", "secret assigned in code"),
            (
                "chatbot_auth_token: \"Bearer Oq9wMxEhh2FDEEtfjgVvVqE1SkHb\"",
                "secret assigned in code",
            ),
            // Hex of 20 to 31 characters near random hex's entropy.
            ("exchangerate_secret: \"988c79fc35526f7eaed46725\"", "secret assigned in code"),
            // A secret-named one-line XML element (a Jenkins `{…}` value too).
            (
                "<account_key>hYgCfrL1spNxnyVmihA/2O76UMFxFkM/R5Kjp1vRt+1fjORS/6ilI8ihN5KXSc7Tvo/hBKqFYY/kv5ZJr3J1TW==</account_key>",
                "secret in an XML element",
            ),
            ("<password>{Oq9wMxEhh2FDEEtfjgVvVqE1SkHb}</password>", "secret in an XML element"),
            // A secret in a URL's query.
            (
                "url := \"https://api.example.org/v1/users?key=Oq9wMxEhh2FDEEtfjgVvVqE1SkHb\"",
                "secret in a URL",
            ),
            (
                "https://x.example/posts?page=2&auth_token=u8jzPde0IgxLd6GncfBAepfJBd0Kh8oO",
                "secret in a URL",
            ),
            // Docker config.json credentials.
            (
                "{\"auths\": {\"ghcr.io\": {\"auth\": \"ZGVwbG95OlhrM3Y5UW0yTHA3Uno=\"}}}",
                "Docker registry credentials",
            ),
            // Formats.
            (
                "https://discord.com/api/webhooks/7224704558530435205/Wk8JzFalHlsZfYcMMDktXP-tKsf2rcDkdfrUnW5gcF_Ha6ili8GjHEAD6-Wj9KfzjsQG",
                "Discord webhook",
            ),
            (
                "SF_SESSION=00DPVStNKiaEdFr!mB_LK777pzNk8cL6j5IXAAjlsHUqJoUD._Ydua_5ZMs1SWOpQaPRYpzbLGViYXjU2JgJngKtFI3OyV2dZAkg05rK_gqv81RK",
                "Salesforce token",
            ),
            ("relic = 'NRAK-58Z6TNOVMIZWDIAEQ1KDFY6SPSC'", "New Relic key"),
            (
                "docker login r.azurecr.io -u r -p DtkwtDDb+xHKas1VOqg6YYZYn9ZhyiA4uoRgnatmUd+ACRe3nNyj",
                "Azure container registry password",
            ),
            (
                "https://prod-01.westus.logic.azure.com:443/workflows/0a1b/triggers/manual/paths/invoke?api-version=2016-06-01&sp=%2Ftriggers&sv=1.0&sig=vJfupxqZKm4bV3AyAVHn2yrvWdFrK9xiRG",
                "Power Automate webhook",
            ),
            (
                "https://acct.blob.core.windows.net/c?sv=2023-01-03&se=2025-06-19&sr=c&sp=r&sig=vJfupxqZKm4bV3AyAVHn%2ByrvWdFrK9xiRGHOY32nf%3D",
                "Azure SAS token",
            ),
            (
                "JIRA=ATATT3xFfGF0AUsdMlHUvTCQCyEZDz-TddJ8HyS5SUkCnD8zRA9a9SkpXz9w3QlY7Zkuvqdt7s8Stqcbnr3yBdGBLEPH1qhT61qtc4xatws8phP9nhFyJfm5di4PzJ59FHz5r1pY4OjE2jBMptUsGr7CmY_uCu3ZR1zTOlUcR64cXQLioDnkHI=0A1B2C3D",
                "Atlassian token",
            ),
            ("deploy:ATBBr5pyzPCB9t2039bicBTW5ZE9LFae", "Bitbucket app password"),
            (
                "pcsk_c5Xlr_Wi0B26R08qzjI6GKFSufrdZSlB5er8bOfZqfM2oeq3hDavJA76rNicHTp8hkqdlm",
                "Pinecone key",
            ),
            ("LicenseKey 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", "MaxMind license key"),
            // A literal longer than 1,000 characters.
            (&LONG_TOKEN, "secret assigned in code"),
        ];
        for (line, kind) in found {
            let s = find_secrets(line);
            assert_eq!(s.first().map(|s| s.kind), Some(*kind), "{line}: {s:?}");
        }
        let clean = [
            // Keys that are not secrets: a map's, a header's, a cache's, a
            // public one, an id, a file, a self-describing placeholder.
            "<entry key=\"jetbrains.mps.v8_elimination\" value=\"executed\" />",
            "w := performRequest(router, \"GET\", \"/p\", header{Key: \"X-Forwarded-Prefix\", Value: \"/api\"})",
            "\"bucket_key\": \"SalesResults-1.2\"",
            "cache_key = \"user:7f3a9c:profile:v2\"",
            "stripe_publishable_key: \"pk_live_u8jzPde0IgxLd6GncfBAepfJBd0Kh8oO\"",
            "license_key = \"3f2504e0-4f89-11d3-9a0c-0305e82c3301\"",
            "ssl_key: \"config/ssl/server-2024.pem\"",
            "AccountKey=storageaccountkeybase64encoded;EndpointSuffix=core.windows.net",
            "\"other_key\" => \"sk_abcdefghijklmnopqrstuvwxyz123\",",
            "ibm_iam_key:= \"abcd1234abcd1234abcd1234ABCD1234ABCD1234--__extra\"",
            "siteKey: \"6LcOq9wMxEhh2FDEEtfjgVvVqE1SkHb\"",
            // An id, not a secret, in a secret-named element.
            "<UserSecretsId>79a3edd0-2092-40a2-a04d-dcb46d5ca9ed</UserSecretsId>",
            // Not a test-mode key: `task_test_`.
            "nonMatchingToken := \"task_test_ksvfeheqdlq6ve0kc51uzpiwb4odxz\"",
            // URLs whose query holds a template or a short value.
            "url = \"https://api.example.org/v1?key=$API_KEY&q=1\"",
            "https://example.org/search?key=value&page=2",
            // Docker auth of a placeholder (`user:pass`), and `sig` without `sv`.
            "{\"auths\":{\"\":{\"auth\":\"dXNlcjpwYXNz\"}}}",
            "https://example.org/download?sig=vJfupxqZKm4bV3AyAVHn%2ByrvWdFrK9xiRGHOY32nf%3D",
            // New Relic browser keys ship in pages.
            "NREUM.info={licenseKey:\"NRJS-4f2e8c1a9b7d3e5f6a0\"}",
        ];
        for line in clean {
            assert!(find_secrets(line).is_empty(), "{line}: {:?}", find_secrets(line));
        }
    }

    /// Round 4: a credential close after a provider's name (issue 34).
    #[test]
    fn a_credential_near_a_providers_name() {
        let found = [
            "mailgun - 'q8ZtR2mVx7LpK4nW9cYb3HsD'",
            "[INFO] using sendgrid key x7Kp2mQ9vR4tL8wZ3nB6cY1d",
            "  <id>{agora 7kq2m9vx4tl8wz3nb6cy1dp5}</id>",
            "twilio: \"Zk4mQ8vR2xL7pT3wN9bC6yD1\"",
            "spotifykey - 'Hq7vN2kX9mR4tL8pW3zB6cY1'",
            "DATADOG = Wm3xQ9kL2vR7pT4nZ8bC1yD6",
            "client = Okta.Client(org, \"00Wm3xQ9kL2vR7pT4nZ8bC1yD6q\")",
            "Your Algolia admin key is 4c9e1a7b3d8f2e6a0b5c9d1e7f3a8b2c, keep it safe.",
            "setup(pusher, 'Wm3xQ9kL2vR7pT4nZ8bC1yD6', cluster)",
        ];
        for line in found {
            let s = find_secrets(line);
            assert_eq!(
                s.first().map(|s| s.kind),
                Some("secret near a provider's name"),
                "{line}: {s:?}"
            );
        }
        let clean = [
            // Not the name: `miro` in `mirror`, a provider in a longer word.
            "mirror = 'Hq7vN2kX9mR4tL8pW3zB6cY1'",
            "unmailgunned 'Hq7vN2kX9mR4tL8pW3zB6cY1'",
            // Common words are not in the list.
            "box 'Hq7vN2kX9mR4tL8pW3zB6cY1'",
            "abstract class Q8ZtR2mVx7LpK4nW9cYb3HsD {}",
            // Checksums, commits, versions, URLs, paths, hosts.
            "github.com/mailgun/mailgun-go/v4 v4.8.1 h1:1+MXu2iZPAv8Fz3lGqC1IWFmqXxVgxJbRzXkLt3mS0c=",
            "\"mailgun-js\": \"sha512-Hq7vN2kX9mR4tL8pW3zB6cY1q8ZtR2mVx7LpK4nW9cYb3HsD==\"",
            "bump sendgrid to commit 3f2a9c1b7d4e8f0a6b5c2d9e1f7a3b8c4d6e0f21",
            "mailgun url 'https://api.mailgun.net/v3/Hq7vN2kX9mR4tL8pW3zB6cY1'",
            "sendgrid = 'templates/Hq7vN2kX9mR4tL8pW3zB6cY1/mail.html'",
            "mailgun host = 'Hq7vN2kX9mR4tL8pW3zB6cY1.mailgun.org'",
            // An id, a placeholder, a sequence, a short or plain value.
            "mailgun id = '3f2504e0-4f89-11d3-9a0c-0305e82c3301'",
            "mailgun key = 'your-mailgun-api-key-here-12345'",
            "sendgrid = 'abcdefghijklmnopqrstuvwxyz123456'",
            "sendgrid short 'Hq7vN2kX9'",
            "twilio = 'TwilioMessagingServiceHandler'",
            "import mailgun from \"mailgun-js\"; // v0.22.0",
            // Too far after the name.
            "twilio sends the message, and then the dispatcher logs it: 'Hq7vN2kX9mR4tL8pW3zB6cY1'",
            // Allowed by a marker.
            "mailgun 'Hq7vN2kX9mR4tL8pW3zB6cY1' // ironbees:allow-secret",
        ];
        for line in clean {
            assert!(find_secrets(line).is_empty(), "{line}: {:?}", find_secrets(line));
        }
        // Masked like the others.
        let line = "mailgun - 'q8ZtR2mVx7LpK4nW9cYb3HsD'";
        assert_eq!(find_secrets(line)[0].masked(line), "mailgun - 'q8Zt…sD'");
    }

    static LONG_TOKEN: LazyLock<String> = LazyLock::new(|| {
        format!("refresh_token = \"0.{}\"", "Oq9wMxEhh2FDEEtfjgVvVqE1SkHb".repeat(40))
    });

    /// A secret-named assignment whose literal is on the next line.
    #[test]
    fn a_value_on_the_line_after_its_name() {
        let cases: &[(&str, &str, bool)] = &[
            ("const scrapingBeeApiKey =", "  \"Oq9wMxEhh2FDEEtfjgVvVqE1SkHb\"; // the key", true),
            (
                "    public static final String DEFAULT_ACCOUNT_KEY",
                "        = \"Oq9wMxEhh2FDEEtfjgVvVqE1SkHb\";",
                true,
            ),
            ("client_secret:", "  'u8jzPde0IgxLd6GncfBAepfJBd0Kh8oO'", true),
            // Two operators or none, a template, a non-secret name, an id.
            ("const apiKey =", "  = \"Oq9wMxEhh2FDEEtfjgVvVqE1SkHb\";", false),
            ("const apiKey", "  \"Oq9wMxEhh2FDEEtfjgVvVqE1SkHb\";", false),
            ("const apiKey =", "  \"${API_KEY}\";", false),
            ("const description =", "  \"Oq9wMxEhh2FDEEtfjgVvVqE1SkHb\";", false),
            ("const tokenUrl =", "  \"Oq9wMxEhh2FDEEtfjgVvVqE1SkHb\";", false),
            (
                "const apiKey =",
                "  \"Oq9wMxEhh2FDEEtfjgVvVqE1SkHb\"; // ironbees:allow-secret",
                false,
            ),
        ];
        for (name, value, want) in cases {
            let s = find_secret_after_name(name, value);
            assert_eq!(s.is_some(), *want, "{name} / {value}: {s:?}");
        }
    }

    /// `<password>`, the value, `</password>`: the value line is the finding.
    #[test]
    fn a_value_on_the_line_after_its_element() {
        let cases: &[(&str, &str, &str, bool)] = &[
            ("<apiToken>", "    9fK2mZq7Lp0xRt4vBn8wYc3s", "</apiToken>", true),
            ("  <db.password type=\"text\">", "Tr0ub4dor&3xQ9!kz", "  </db.password>", true),
            // Not the same element, a template, a placeholder, not a secret name.
            ("<apiToken>", "9fK2mZq7Lp0xRt4vBn8wYc3s", "</other>", false),
            ("<password>", "  ${DB_PASSWORD}", "</password>", false),
            ("<password>", "  changeme-please", "</password>", false),
            ("<description>", "9fK2mZq7Lp0xRt4vBn8wYc3s", "</description>", false),
            ("<password>", "9fK2mZq7Lp0x  # ironbees:allow-secret", "</password>", false),
        ];
        for (open, value, close, want) in cases {
            let s = find_secret_in_element(open, value, close);
            assert_eq!(s.is_some(), *want, "{open} {value} {close}: {s:?}");
        }
    }

    #[test]
    fn a_masked_line_shows_no_secret() {
        let line = "key = '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'";
        let s = &find_secrets(line)[0];
        let masked = s.masked(line);
        assert_eq!(masked, "key = 'ghp_…Ux'");
    }
}
