//! Locales whose character set can hide shell syntax.
//!
//! In some multibyte character sets (Big5, GBK, GB18030, Shift_JIS, UHC,
//! ...) the second byte of a character can be an ASCII byte such as `\`.
//! Under such a locale bash reads `\xe4\xb8\xad\;` as a two-byte character
//! followed by `;`, a command separator, while the analysis (UTF-8, like
//! the agent) reads an escaped `;`. So a line is only analysed as bash
//! will read it when the locale's character set is UTF-8, single-byte, or
//! an EUC set (whose every byte of a multibyte character is above 0x7f).

/// The locale variables bash's character set comes from, first set wins.
pub const CTYPE_VARIABLES: [&str; 3] = ["LC_ALL", "LC_CTYPE", "LANG"];

/// Whether text under the locale `name` (a value of `LC_ALL`, `LC_CTYPE`
/// or `LANG`, e.g. `en_US.UTF-8`) is read as the analysis reads it.
/// Character sets not known to be safe are not.
pub fn is_safe(name: &str) -> bool {
    let name = name.split('@').next().unwrap_or(name);
    let (place, charset) = match name.split_once('.') {
        Some((place, charset)) => (place, Some(charset)),
        None => (name, None),
    };
    let Some(charset) = charset else {
        // glibc's default character set for a place: Big5 and
        // Big5-HKSCS for Taiwan and Hong Kong, safe sets elsewhere.
        let place = place.to_ascii_lowercase();
        return place != "zh_tw" && place != "zh_hk";
    };
    let charset: String = charset
        .chars()
        .filter(|c| c.is_ascii_alphanumeric())
        .map(|c| c.to_ascii_lowercase())
        .collect();
    const SAFE: [&str; 4] = ["utf8", "ascii", "usascii", "ansix341968"];
    const SAFE_FAMILIES: [&str; 8] = [
        "iso8859",
        "koi8",
        "cp125",
        "windows125",
        "euc",
        "tis620",
        "latin",
        "gb2312",
    ];
    SAFE.contains(&charset.as_str()) || SAFE_FAMILIES.iter().any(|f| charset.starts_with(f))
}

/// Why a process environment's locale makes bash read a line differently
/// from the analysis, if it does: `get` looks up a variable.
pub fn unsafe_environment(get: impl Fn(&str) -> Option<String>) -> Option<String> {
    if get("LOCPATH").is_some_and(|v| !v.is_empty()) {
        return Some(
            "`LOCPATH` is set: bash would read its character set from locale files the analysis cannot check".to_owned(),
        );
    }
    let (variable, value) = CTYPE_VARIABLES
        .iter()
        .find_map(|v| get(v).filter(|x| !x.is_empty()).map(|x| (*v, x)))?;
    (!is_safe(&value)).then(|| {
        format!(
            "the locale `{variable}={value}` has a character set in which shell syntax can hide inside a multibyte character; use a UTF-8 locale"
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn utf8_single_byte_and_euc_sets_are_safe() {
        for name in [
            "C",
            "POSIX",
            "C.UTF-8",
            "en_US.UTF-8",
            "en_US.utf8",
            "de_DE.ISO-8859-15@euro",
            "en_US",
            "ru_RU.KOI8-R",
            "ja_JP.eucJP",
            "ko_KR.EUC-KR",
            "zh_CN.GB2312",
            "zh_CN",
            "ja_JP",
            "zh_TW.UTF-8",
            "th_TH.TIS-620",
        ] {
            assert!(is_safe(name), "{name}");
        }
    }

    #[test]
    fn sets_whose_second_bytes_can_be_ascii_are_not() {
        for name in [
            "zh_CN.GBK",
            "zh_CN.gb18030",
            "zh_TW.BIG5",
            "zh_TW",
            "zh_HK",
            "zh_HK.big5hkscs",
            "ja_JP.SJIS",
            "ja_JP.Shift_JIS",
            "ko_KR.UHC",
            "ko_KR.JOHAB",
            "zh_CN.CP936",
            "xx_YY.SOMETHING-NEW",
        ] {
            assert!(!is_safe(name), "{name}");
        }
    }

    #[test]
    fn the_first_locale_variable_set_decides_and_locpath_is_refused() {
        let env = |pairs: &'static [(&'static str, &'static str)]| {
            move |k: &str| {
                pairs
                    .iter()
                    .find(|(n, _)| *n == k)
                    .map(|(_, v)| (*v).to_owned())
            }
        };
        assert_eq!(unsafe_environment(env(&[])), None);
        assert_eq!(unsafe_environment(env(&[("LANG", "en_US.UTF-8")])), None);
        assert!(unsafe_environment(env(&[("LANG", "zh_CN.GBK")])).is_some());
        assert_eq!(
            unsafe_environment(env(&[("LC_ALL", "C.UTF-8"), ("LANG", "zh_CN.GBK")])),
            None
        );
        assert!(
            unsafe_environment(env(&[("LC_ALL", ""), ("LC_CTYPE", "zh_TW.BIG5")]))
                .unwrap()
                .contains("LC_CTYPE=zh_TW.BIG5")
        );
        assert!(unsafe_environment(env(&[("LOCPATH", "/tmp/loc")])).is_some());
    }
}
