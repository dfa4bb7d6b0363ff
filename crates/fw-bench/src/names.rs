//! Symbol names: a minimal Rust legacy-mangling demangler and the symbol → crate attribution
//! used by the size report.
//!
//! rustc 1.95 emits legacy (`_ZN…E`) names by default; `_R` (v0) names are shown raw and
//! attributed by the same prefix rules on the raw name, which is good enough for the size table.

/// Demangles a legacy Rust symbol (`_ZN7cc_math5recip5RECIP17h…E` → `cc_math::recip::RECIP`),
/// dropping the trailing hash. Other names are returned unchanged.
pub fn demangle(raw: &str) -> String {
    let Some(mut rest) = raw.strip_prefix("_ZN") else {
        return raw.to_owned();
    };
    let mut parts: Vec<String> = Vec::new();
    loop {
        if rest.starts_with('E') || rest.is_empty() {
            break;
        }
        let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
        let Ok(len) = rest[..digits].parse::<usize>() else {
            return raw.to_owned();
        };
        let Some(ident) = rest.get(digits..digits + len) else {
            return raw.to_owned();
        };
        parts.push(unescape(ident));
        rest = &rest[digits + len..];
    }
    if parts
        .last()
        .is_some_and(|h| h.len() == 17 && h.starts_with('h'))
    {
        parts.pop();
    }
    parts.join("::")
}

fn unescape(ident: &str) -> String {
    let s = ident
        .strip_prefix('_')
        .filter(|s| s.starts_with('$'))
        .unwrap_or(ident);
    s.replace("..", "::")
        .replace("$LT$", "<")
        .replace("$GT$", ">")
        .replace("$u20$", " ")
        .replace("$C$", ",")
        .replace("$RF$", "&")
        .replace("$BP$", "*")
        .replace("$u5b$", "[")
        .replace("$u5d$", "]")
        .replace("$u7b$", "{")
        .replace("$u7d$", "}")
        .replace("$u27$", "'")
        .replace("$LP$", "(")
        .replace("$RP$", ")")
}

/// Unmangled (C ABI) symbol prefixes and the crate whose code they contain.
///
/// With LTO the per-event code of a crate is inlined into its `extern "C"` entry points, so the
/// probe wrappers (`probe_<kind>_*`) and the C ABI functions (`cc_<kind>_*`) are charged to the
/// crate they wrap. **Add a line here when you add an algorithm's probe or FFI functions.**
pub const PREFIX_CRATES: &[(&str, &str)] = &[
    ("probe_cc_math_", "cc-math"),
    ("probe_timely_", "timely-cc"),
    ("probe_hpcc_", "hpcc-cc"),
    ("probe_cats_", "cats-conductor"),
    ("probe_pacer_", "cc-pacer"),
    ("cc_recip", "cc-math"),
    ("cc_timely_", "timely-cc"),
    ("cc_hpcc_", "hpcc-cc"),
    ("cc_cats_", "cats-conductor"),
    ("cc_pacer_", "cc-pacer"),
    ("cc_ffi_", "cc-ffi"),
];

/// The crate a symbol's bytes are charged to: an entry of [`PREFIX_CRATES`]; else the first
/// path component of a demangled Rust name (`cc_math::…` → `cc-math`, `<cc_math::X as …>` →
/// `cc-math`); else `compiler-builtins` for `__`-prefixed helpers; else `other` (start-up
/// code, C functions).
pub fn crate_of(raw: &str) -> String {
    if let Some((_, krate)) = PREFIX_CRATES.iter().find(|(p, _)| raw.starts_with(p)) {
        return (*krate).to_owned();
    }
    if raw.starts_with("_ZN") {
        let d = demangle(raw);
        let d = d.trim_start_matches('<').trim_start_matches('&');
        let first = d.split("::").next().unwrap_or(d);
        let first = first.split(' ').next().unwrap_or(first);
        return first.replace('_', "-");
    }
    if let Some(krate) = raw.strip_prefix("_R").and_then(v0_crate) {
        return krate.replace('_', "-");
    }
    if raw.starts_with("__") {
        return "compiler-builtins".to_owned();
    }
    "other".to_owned()
}

/// The first crate root (`C[s<disambiguator>_]<len><ident>`) of a v0-mangled name.
fn v0_crate(v0: &str) -> Option<&str> {
    let b = v0.as_bytes();
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'C' {
            let mut j = i + 1;
            if b.get(j) == Some(&b's') {
                // Disambiguator: base-62 digits up to '_'.
                j += v0[j..].find('_')? + 1;
            }
            let digits = v0[j..].bytes().take_while(u8::is_ascii_digit).count();
            if digits > 0 {
                let len: usize = v0[j..j + digits].parse().ok()?;
                return v0.get(j + digits..j + digits + len);
            }
        }
        i += 1;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn demangles_legacy_names() {
        assert_eq!(
            demangle("_ZN7cc_math5recip5RECIP17hd8c6e00f221849e4E"),
            "cc_math::recip::RECIP"
        );
        assert_eq!(
            demangle("_ZN45_$LT$cc_math..recip..Recip$u20$as$u20$Foo$GT$3bar17h0123456789abcdefE"),
            "<cc_math::recip::Recip as Foo>::bar"
        );
        assert_eq!(demangle("probe_cc_math_recip"), "probe_cc_math_recip");
    }

    #[test]
    fn attributes_crates() {
        assert_eq!(
            crate_of("_ZN7cc_math5recip5RECIP17hd8c6e00f221849e4E"),
            "cc-math"
        );
        assert_eq!(
            crate_of("_ZN45_$LT$cc_math..recip..Recip$u20$as$u20$Foo$GT$3bar17h0123456789abcdefE"),
            "cc-math"
        );
        assert_eq!(crate_of("probe_hpcc_on_ack"), "hpcc-cc");
        assert_eq!(crate_of("cc_timely_on_completion"), "timely-cc");
        assert_eq!(crate_of("__mulsi3"), "compiler-builtins");
        assert_eq!(
            crate_of(
                "_RNvNtNtCsheXoZokrRQM_17compiler_builtins3int19specialized_div_rem11u64_div_rem"
            ),
            "compiler-builtins"
        );
        assert_eq!(crate_of("_start"), "other");
    }
}
