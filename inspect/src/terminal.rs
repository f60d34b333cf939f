//! Text made safe for a terminal: model text, tool output and anything else a session
//! holds can carry control characters that a terminal obeys (move the cursor, retitle
//! the window, write the clipboard with OSC 52, erase a line with a carriage return).
//! [`neutralize`] shows every such character as a visible stand-in instead, so that
//! what is printed is only ever text; the log keeps the bytes as they came.

use std::borrow::Cow;

/// `text` with every control character made visible, except newline and tab:
///
/// - C0 controls (U+0000–U+001F) become their Control Pictures (U+2400–U+241F):
///   ESC is `␛`, BEL `␇`, backspace `␈`, a carriage return `␍`. A carriage return
///   right before a newline (a CRLF line end) is kept: it cannot overwrite anything.
/// - DEL (U+007F) becomes `␡`.
/// - C1 controls (U+0080–U+009F, e.g. U+009B, the one-character CSI) become
///   `\u{9b}` and the like.
///
/// Every escape sequence (CSI, OSC including OSC 52, DCS, APC, …) starts with ESC or a
/// C1 control, so none survives: `ESC ] 52 ; c ; …` prints as `␛]52;c;…`. Text
/// without control characters is returned as it is, without copying.
pub fn neutralize(text: &str) -> Cow<'_, str> {
    neutralize_keeping(text, &[])
}

/// [`neutralize`], keeping the SGR sequences `ESC [ CODE m` whose CODE is one of
/// `sgr` (the colors a view paints with itself; [`crate::Style::neutralize`]).
pub fn neutralize_keeping<'a>(text: &'a str, sgr: &[&str]) -> Cow<'a, str> {
    let Some(first) = first_unsafe(text) else {
        return Cow::Borrowed(text);
    };
    let mut out = String::with_capacity(text.len() + 16);
    out.push_str(&text[..first]);
    let mut rest = &text[first..];
    while let Some(c) = rest.chars().next() {
        if c == '\x1b'
            && let Some(len) = kept_sgr(rest, sgr)
        {
            out.push_str(&rest[..len]);
            rest = &rest[len..];
            continue;
        }
        match c {
            '\n' | '\t' => out.push(c),
            '\r' if rest[1..].starts_with('\n') => out.push(c),
            '\u{0}'..='\u{1f}' => out.push(picture(c)),
            '\u{7f}' => out.push('␡'),
            '\u{80}'..='\u{9f}' => out.push_str(&format!("\\u{{{:x}}}", u32::from(c))),
            _ => out.push(c),
        }
        rest = &rest[c.len_utf8()..];
    }
    Cow::Owned(out)
}

/// The byte offset of the first character [`neutralize`] would change.
fn first_unsafe(text: &str) -> Option<usize> {
    let bytes = text.as_bytes();
    bytes.iter().enumerate().position(|(i, &b)| {
        (b < 0x20 && b != b'\n' && b != b'\t' && !(b == b'\r' && bytes.get(i + 1) == Some(&b'\n')))
            || b == 0x7f
            // U+0080–U+009F are C2 80 – C2 9F in UTF-8.
            || (b == 0xc2 && bytes.get(i + 1).is_some_and(|&n| n < 0xa0))
    })
}

/// The Control Picture of a C0 control.
fn picture(c: char) -> char {
    char::from_u32(0x2400 + u32::from(c)).unwrap_or('?')
}

/// The length of the SGR sequence `rest` starts with, if it is one of `sgr`.
fn kept_sgr(rest: &str, sgr: &[&str]) -> Option<usize> {
    let body = rest.strip_prefix("\x1b[")?;
    let end = body.find('m')?;
    sgr.contains(&&body[..end]).then_some(2 + end + 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_without_controls_is_borrowed_as_it_is() {
        let text = "plain text, tabs\tand\nnewlines, ünïcödé ✓, CRLF\r\n";
        assert!(matches!(neutralize(text), Cow::Borrowed(t) if t == text));
    }

    #[test]
    fn every_escape_sequence_is_shown_not_obeyed() {
        let hostile = concat!(
            "a\x1b[2J\x1b[H",                // clear the screen, cursor home
            "b\x1b]0;pwned\x07",             // retitle the window (OSC 0, BEL)
            "c\x1b]52;c;aGVsbG8=\x1b\\",     // write the clipboard (OSC 52, ST)
            "d\x1bP1$qm\x1b\\",              // DCS
            "e\u{9b}31m\u{9d}8;;x\u{9c}",    // C1 CSI, OSC, ST
            "f\x08\x08gh\rover\x7f\0 end\n"  // backspaces, CR, DEL, NUL
        );
        expect_test::expect![[r#"
            a␛[2J␛[Hb␛]0;pwned␇c␛]52;c;aGVsbG8=␛\d␛P1$qm␛\e\u{9b}31m\u{9d}8;;x\u{9c}f␈␈gh␍over␡␀ end
        "#]]
        .assert_eq(&neutralize(hostile));
        let out = neutralize(hostile);
        assert!(!out.chars().any(|c| c.is_control() && c != '\n'), "{out:?}");
    }

    #[test]
    fn only_the_listed_sgr_sequences_are_kept() {
        let text = "\x1b[31mred\x1b[0m \x1b[8mhidden\x1b[0m \x1b[31";
        assert_eq!(
            neutralize_keeping(text, &["0", "31"]),
            "\x1b[31mred\x1b[0m ␛[8mhidden\x1b[0m ␛[31"
        );
    }
}
