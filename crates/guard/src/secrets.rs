//! Secrets by their real formats, not by the words around them.
//!
//! Two kinds of evidence:
//! - **a format**: a provider's key prefix and shape (`AKIA…`, `ghp_…`,
//!   `xoxb-…`, `sk_live_…`, `AIza…`, `glpat-…`, `sk-ant-…`), a private key
//!   block, a password inside a URL;
//! - **an assignment**: a name that says secret (`password`, `api_key`,
//!   `client_secret`, `token`) given a literal that looks like one — long
//!   enough, random enough (Shannon entropy), and neither a placeholder
//!   (`changeme`, `<your-key>`, `xxxx`), a template (`${TOKEN}`, `{{ token }}`),
//!   nor a lookup (`os.environ[...]`, `getenv(...)`).
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
        format("Slack token", r"\b(xox[abposr]-[0-9A-Za-z-]{10,})", 1),
        format(
            "Slack webhook",
            r"(https://hooks\.slack\.com/(?:services|workflows)/[A-Za-z0-9+/]{20,})",
            1,
        ),
        format("Stripe key", r"\b((?:sk|rk)_live_[0-9A-Za-z]{20,})\b", 1),
        format("Google API key", r"\b(AIza[0-9A-Za-z_\-]{35})\b", 1),
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
/// name says secret.
static ASSIGNMENT: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(&format!(
        r#"(?i)({SECRET_NAME})['"]?(?:\[\d*\])?\s*(?::=|=>|[:=])\s*(?:[bru@]{{0,2}})(['"`])([^'"`\n]{{8,200}})(['"`])"#
    ))
    .expect("valid")
});

/// Unquoted `NAME=value` (shell, `.env`).
static ENV_ASSIGNMENT: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"(?i)^\s*(?:export\s+)?([A-Z0-9_]*(?:PASSWORD|PASSWD|SECRET|TOKEN|API_?KEY|ACCESS_?KEY|PRIVATE_?KEY)[A-Z0-9_]*)\s*=\s*([^\s'\x22#()\[\]{},;]{12,200})\s*$",
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
        r#"(?i)(?:^|[\s{{,;(])["']?{SECRET_NAME}["']?\s*(?::=|=|:)\s*([^\s'"`#()\[\]{{}},;<>]{{12,200}})(?:[\s,;]|$)"#
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

/// Well-formed templates: `${NAME}`, `${NAME:-default}`, `{{ name }}`,
/// `%(name)s`, `$(command)`, `<your-key>`.
static TEMPLATE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"\$\{[A-Za-z_][A-Za-z0-9_.]*(?:[:?+\-=][^}]*)?\}|\{\{[^}]*\}\}|%\([A-Za-z_][A-Za-z0-9_]*\)[sdr]|\$\([^)]*\)|<[^<>]*>|^\$[A-Za-z_][A-Za-z0-9_]*$",
    )
    .expect("valid")
});

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
/// `000000`): a placeholder in a real format's shape, which a generated key
/// all but never has.
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
    false
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

/// Whether a literal given to a secret-named variable looks like a real secret.
fn looks_secret(value: &str) -> bool {
    let lower = value.to_ascii_lowercase();
    if PLACEHOLDERS.iter().any(|p| lower.contains(p)) || TEMPLATE.is_match(value) {
        return false;
    }
    // Prose, paths and identifiers are not keys: a secret has no spaces, and
    // mixes character classes.
    if value.contains(' ') || value.starts_with('/') || value.starts_with("./") {
        return false;
    }
    // Words joined by separators (`django-insecure-dev-only`, `my_app_secret`)
    // are a name someone typed, not a generated key.
    if value.split(['-', '_', '.', ':']).all(|w| {
        w.chars().all(|c| c.is_ascii_lowercase()) || w.chars().all(|c| c.is_ascii_uppercase())
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
    let hex = value.len() >= 32 && value.chars().all(|c| c.is_ascii_hexdigit());
    hex || (classes >= 3 && entropy(value) >= 3.0) || (classes >= 2 && entropy(value) >= 3.7)
}

/// The secrets on one line.
pub fn find_secrets(line: &str) -> Vec<Secret> {
    if ALLOW_MARKERS.iter().any(|m| line.contains(m)) {
        return Vec::new();
    }
    let mut out: Vec<Secret> = Vec::new();
    let mut push = |kind, start, end| {
        if !out.iter().any(|s: &Secret| s.start < end && start < s.end) {
            out.push(Secret { kind, start, end });
        }
    };
    for f in FORMATS.iter() {
        for c in f.regex.captures_iter(line) {
            if let Some(m) = c.get(f.group)
                && !filler(m.as_str())
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
        if open.as_str() == close.as_str() && looks_secret(value.as_str()) {
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
    for c in FLAG.captures_iter(line) {
        if let Some(value) = c.get(1)
            && looks_secret_unquoted(value.as_str())
        {
            push("secret on a command line", value.start(), value.end());
        }
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

    #[test]
    fn a_masked_line_shows_no_secret() {
        let line = "key = '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'";
        let s = &find_secrets(line)[0];
        let masked = s.masked(line);
        assert_eq!(masked, "key = 'ghp_…Ux'");
    }
}
