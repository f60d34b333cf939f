//! Tests of the highlighter: each language's token classes, state carried across
//! lines, and no input that panics or loses text.

use std::fmt::Write as _;

use expect_test::{Expect, expect};
use proptest::prelude::*;
use ratatui::text::Line;

use super::*;
use crate::testkit::styled;

fn lines(code: &str, lang: &str, theme: &Theme) -> Vec<Line<'static>> {
    highlight(code, lang, theme)
        .into_iter()
        .map(Line::from)
        .collect()
}

/// `code`'s tokens in `lang`, each but plain text and punctuation marked with its
/// class: `[kw:fn] [fn:main]()`.
fn classes(lang: &str, code: &str) -> String {
    let language = languages::language_for(lang).unwrap_or_else(|| panic!("no {lang}"));
    let mut state = State::Code;
    let mut out = String::new();
    for line in code.lines() {
        for (token, start, end) in lexer::lex(language, &mut state, line) {
            let text = &line[start..end];
            let tag = match token {
                Token::Plain | Token::Punctuation => {
                    out.push_str(text);
                    continue;
                }
                Token::Keyword => "kw",
                Token::Type => "ty",
                Token::Function => "fn",
                Token::Macro => "mac",
                Token::String => "str",
                Token::Escape => "esc",
                Token::Number => "num",
                Token::Comment => "com",
                Token::Attribute => "attr",
                Token::Variable => "var",
                Token::Tag => "tag",
                Token::Operator => "op",
                Token::Inserted => "ins",
                Token::Deleted => "del",
                Token::Hunk => "hunk",
                Token::Header => "head",
            };
            let _ = write!(out, "[{tag}:{text}]");
        }
        out.push('\n');
    }
    out
}

fn check(lang: &str, code: &str, expect: Expect) {
    expect.assert_eq(&classes(lang, code));
}

/// A sample of every language, with what spans lines in it.
const SAMPLES: &[(&str, &str)] = &[
    (
        "rust",
        "#[derive(Debug)]\nfn parse<'a>(line: &'a str) -> Vec<&str> {\n    /* outer /* inner */ still\n    */ let c = '\\''; println!(\"a\\n{}\", r#\"raw \"q\" \"#);\n    let MAX: u32 = 0x1F + 1.5e3; let s = \"two\n    lines\"; Some(x).unwrap() // done\n}",
    ),
    (
        "python",
        "@cache\ndef f(x: int) -> str:\n    \"\"\"doc\n    string\"\"\"\n    return f'{x}\\n' + rb\"b\" # c\nclass Foo(Bar): pass",
    ),
    (
        "ts",
        "import { x } from \"./y\";\n@Component()\nexport const f = async (a: number): Promise<string> => `t ${a}\nend`; // c\nlet $el = null /* c */;",
    ),
    (
        "bash",
        "for f in *.rs; do echo \"$f ${x}\" # c\n  git diff --stat ${#a} 'two\nlines'\ndone",
    ),
    ("json", "{\"a\": [1, 2.5, true, null], \"b\\\"c\": \"d\"}"),
    (
        "toml",
        "[package]\nname = \"x\" # c\nlist = [1, true]\ntext = '''\nmany lines'''",
    ),
    (
        "yaml",
        "on:\n  push: # c\n  runs-on: ubuntu-latest\n  - run: \"cargo test\"",
    ),
    (
        "go",
        "package main\nfunc main() { s := `raw\nx`; r := 'a'; fmt.Println(s, nil) }",
    ),
    (
        "c",
        "#include <stdio.h>\n  #define N 10\nint main(void) { char c = '\\n'; /* a\n b */ printf(\"%d\\n\", N); return 0; }",
    ),
    (
        "cpp",
        "template <typename T> class A : public B { T* p = nullptr; }; // c",
    ),
    (
        "java",
        "@Override public static void main(String[] args) { System.out.println(\"x\"); }",
    ),
    (
        "sql",
        "SELECT id, name FROM users WHERE age > 18 -- c\n  AND name LIKE 'a%' /* x */ LIMIT 10;\ncreate table t (id integer primary key);",
    ),
    (
        "html",
        "<!DOCTYPE html>\n<div class=\"x\"\n     id='y'>a &amp; b</div> <!-- c\n-->",
    ),
    (
        "css",
        "@media (max-width: 10px) { .a { color: #fff; margin: 0 auto; } } /* c */",
    ),
    (
        "diff",
        "diff --git a/x b/x\n--- a/x\n+++ b/x\n@@ -1,2 +1,2 @@\n-old\n+new\n same",
    ),
    (
        "dockerfile",
        "FROM rust:1.80 AS build\nRUN cargo build --release && echo \"$HOME\" # c\nCOPY --from=build /x /y",
    ),
    (
        "makefile",
        "CC := gcc\nall: main.o $(OBJ)\n\t$(CC) -o $@ $^ # c\nifeq ($(X),1)",
    ),
    (
        "ruby",
        "class Foo < Bar\n  def initialize(x)\n    @x = x # c\n    puts \"hi\" if x.nil?\n  end\nend",
    ),
    (
        "lua",
        "local t = { a = 1 } -- c\n--[[ long\ncomment ]] print([[long\nstr]], \"x\")\nfunction f(a) return nil end",
    ),
];

fn sample(lang: &str) -> &'static str {
    SAMPLES
        .iter()
        .find(|(l, _)| *l == lang)
        .map_or("", |(_, code)| code)
}

#[test]
fn rust_is_highlighted_with_the_themes_colours() {
    expect![[r#"
        ⟦#b48ead:fn⟧⟦#c0c5ce: ⟧⟦#8fa1b3:main⟧⟦#c0c5ce:() {⟧
        ⟦#c0c5ce:    ⟧⟦#b48ead:let⟧⟦#c0c5ce: x = ⟧⟦#d08770:1⟧⟦#c0c5ce:;⟧
        ⟦#c0c5ce:}⟧
    "#]]
    .assert_eq(&styled(&lines(
        "fn main() {\n    let x = 1;\n}",
        "rust",
        &Theme::COLOR,
    )));
}

#[test]
fn rust_tokens() {
    check(
        "rust",
        sample("rust"),
        expect![[r##"
        [attr:#[derive(Debug)]]
        [kw:fn] [fn:parse][op:<][kw:'a][op:>](line[op::] [op:&][kw:'a] [ty:str]) [op:->] [ty:Vec][op:<&][ty:str][op:>] {
            [com:/* outer /* inner */ still]
        [com:    */] [kw:let] c [op:=] [str:'][esc:\'][str:']; [mac:println!]([str:"a][esc:\n][str:{}"], [str:r#"raw "q" "#]);
            [kw:let] [num:MAX][op::] [ty:u32] [op:=] [num:0x1F] [op:+] [num:1.5e3]; [kw:let] s [op:=] [str:"two]
        [str:    lines"]; [ty:Some](x).[fn:unwrap]() [com:// done]
        }
    "##]],
    );
}

#[test]
fn python_tokens() {
    check(
        "python",
        sample("python"),
        expect![[r#"
        [attr:@cache]
        [kw:def] [fn:f](x[op::] [ty:int]) [op:->] [ty:str][op::]
            [str:"""doc]
        [str:    string"""]
            [kw:return] [str:f'{x}][esc:\n][str:'] [op:+] [str:rb"b"] [com:# c]
        [kw:class] [ty:Foo]([ty:Bar])[op::] [kw:pass]
    "#]],
    );
}

#[test]
fn typescript_tokens() {
    check(
        "ts",
        sample("ts"),
        expect![[r#"
        [kw:import] { x } [kw:from] [str:"./y"];
        [attr:@Component]()
        [kw:export] [kw:const] f [op:=] [kw:async] (a[op::] [ty:number])[op::] [ty:Promise][op:<][ty:string][op:>] [op:=>] [str:`t ${a}]
        [str:end`]; [com:// c]
        [kw:let] $el [op:=] [num:null] [com:/* c */];
    "#]],
    );
}

#[test]
fn shell_tokens() {
    check(
        "bash",
        sample("bash"),
        expect![[r#"
        [kw:for] f [kw:in] [op:*].rs; [kw:do] [fn:echo] [str:"$f ${x}"] [com:# c]
          git diff [op:--]stat [var:${#a}] [str:'two]
        [str:lines']
        [kw:done]
    "#]],
    );
}

#[test]
fn json_tokens_make_keys_of_strings_before_a_colon() {
    check(
        "json",
        sample("json"),
        expect![[r#"
        {[var:"a"][op::] [[num:1], [num:2.5], [num:true], [num:null]], [var:"b\"c"][op::] [str:"d"]}
    "#]],
    );
}

#[test]
fn toml_tokens() {
    check(
        "toml",
        sample("toml"),
        expect![[r#"
        [var:[package]]
        [var:name] [op:=] [str:"x"] [com:# c]
        [var:list] [op:=] [[num:1], [num:true]]
        [var:text] [op:=] [str:''']
        [str:many lines''']
    "#]],
    );
}

#[test]
fn yaml_tokens() {
    check(
        "yaml",
        sample("yaml"),
        expect![[r#"
        [var:on][op::]
          [var:push][op::] [com:# c]
          [var:runs-on][op::] ubuntu-latest
          [op:-] [var:run][op::] [str:"cargo test"]
    "#]],
    );
}

#[test]
fn go_tokens() {
    check(
        "go",
        sample("go"),
        expect![[r#"
        [kw:package] main
        [kw:func] [fn:main]() { s [op::=] [str:`raw]
        [str:x`]; r [op::=] [str:'a']; fmt.[fn:Println](s, [num:nil]) }
    "#]],
    );
}

#[test]
fn c_tokens() {
    check(
        "c",
        sample("c"),
        expect![[r#"
        [attr:#include] [str:<stdio.h>]
          [attr:#define] N [num:10]
        [ty:int] [fn:main]([ty:void]) { [ty:char] c [op:=] [str:'][esc:\n][str:']; [com:/* a]
        [com: b */] [fn:printf]([str:"%d][esc:\n][str:"], N); [kw:return] [num:0]; }
    "#]],
    );
}

#[test]
fn cpp_tokens() {
    check(
        "cpp",
        sample("cpp"),
        expect![[r#"
        [kw:template] [op:<][kw:typename] T[op:>] [kw:class] A [op::] [kw:public] B { T[op:*] p [op:=] [num:nullptr]; }; [com:// c]
    "#]],
    );
}

#[test]
fn java_tokens() {
    check(
        "java",
        sample("java"),
        expect![[r#"
        [attr:@Override] [kw:public] [kw:static] [ty:void] [fn:main]([ty:String][] args) { [ty:System].out.[fn:println]([str:"x"]); }
    "#]],
    );
}

#[test]
fn sql_tokens_match_keywords_in_any_case() {
    check(
        "sql",
        sample("sql"),
        expect![[r#"
        [kw:SELECT] id, name [kw:FROM] users [kw:WHERE] age [op:>] [num:18] [com:-- c]
          [kw:AND] name [kw:LIKE] [str:'a%'] [com:/* x */] [kw:LIMIT] [num:10];
        [kw:create] [kw:table] t (id [ty:integer] [kw:primary] [kw:key]);
    "#]],
    );
}

#[test]
fn html_tokens_carry_a_tag_across_lines() {
    check(
        "html",
        sample("html"),
        expect![[r#"
        <![tag:DOCTYPE] [attr:html]>
        <[tag:div] [attr:class][op:=][str:"x"]
             [attr:id][op:=][str:'y']>a [esc:&amp;] b</[tag:div]> [com:<!-- c]
        [com:-->]
    "#]],
    );
}

#[test]
fn css_tokens() {
    check(
        "css",
        sample("css"),
        expect![[r#"
        [attr:@media] ([var:max-width][op::] [num:10px]) { .a { [var:color][op::] [op:#]fff; [var:margin][op::] [num:0] auto; } } [com:/* c */]
    "#]],
    );
}

#[test]
fn diff_lines_are_classed_by_their_prefix() {
    check(
        "diff",
        sample("diff"),
        expect![[r#"
        [head:diff --git a/x b/x]
        [head:--- a/x]
        [head:+++ b/x]
        [hunk:@@ -1,2 +1,2 @@]
        [del:-old]
        [ins:+new]
         same
    "#]],
    );
}

#[test]
fn dockerfile_instructions_are_keywords_only_at_a_lines_start() {
    check(
        "dockerfile",
        sample("dockerfile"),
        expect![[r#"
        [kw:FROM] rust[op::][num:1.80] AS build
        [kw:RUN] cargo build [op:--]release [op:&&] echo [str:"$HOME"] [com:# c]
        [kw:COPY] [op:--]from[op:=]build [op:/]x [op:/]y
    "#]],
    );
}

#[test]
fn makefile_tokens() {
    check(
        "makefile",
        sample("makefile"),
        expect![[r#"
        [var:CC] [op::=] gcc
        [var:all][op::] main.o [var:$(OBJ)]
        	[var:$(CC)] [op:-]o [var:$@] [var:$^] [com:# c]
        [kw:ifeq] ([var:$(X)],[num:1])
    "#]],
    );
}

#[test]
fn ruby_tokens() {
    check(
        "ruby",
        sample("ruby"),
        expect![[r#"
        [kw:class] [ty:Foo] [op:<] [ty:Bar]
          [kw:def] [fn:initialize](x)
            [attr:@x] [op:=] x [com:# c]
            [kw:puts] [str:"hi"] [kw:if] x.[num:nil][op:?]
          [kw:end]
        [kw:end]
    "#]],
    );
}

#[test]
fn lua_tokens() {
    check(
        "lua",
        sample("lua"),
        expect![[r#"
        [kw:local] t [op:=] { a [op:=] [num:1] } [com:-- c]
        [com:--[[ long]
        [com:comment ]]] [fn:print]([str:[[long]
        [str:str]]], [str:"x"])
        [kw:function] [fn:f](a) [kw:return] [num:nil] [kw:end]
    "#]],
    );
}

#[test]
fn a_block_comment_and_a_string_span_lines_and_rust_comments_nest() {
    check(
        "rust",
        "a /* one /* two */\nstill */ b \"s\nt\" c\n/* open",
        expect![[r#"
            a [com:/* one /* two */]
            [com:still */] b [str:"s]
            [str:t"] c
            [com:/* open]
        "#]],
    );
}

#[test]
fn an_unterminated_string_ends_with_its_line_where_strings_are_one_line() {
    check(
        "python",
        "x = \"abc\ny = 1\nz = '''open\nstill",
        expect![[r#"
        x [op:=] [str:"abc]
        y [op:=] [num:1]
        z [op:=] [str:'''open]
        [str:still]
    "#]],
    );
}

#[test]
fn unicode_words_and_strings_keep_their_characters() {
    check(
        "rust",
        "let café = \"漢字 ✓\"; // ünïcode\nlet Ωmega = '字';",
        expect![[r#"
            [kw:let] café [op:=] [str:"漢字 ✓"]; [com:// ünïcode]
            [kw:let] [ty:Ωmega] [op:=] [str:'字'];
        "#]],
    );
}

#[test]
fn tabs_expand_to_four_column_stops_across_tokens() {
    expect![[r#"
        ⟦#c0c5ce:    ⟧⟦#b48ead:let⟧⟦#c0c5ce: x = ⟧⟦#a3be8c:"a  b"⟧⟦#c0c5ce:; ⟧⟦#65737e:// c⟧
    "#]]
    .assert_eq(&styled(&lines(
        "\tlet\tx = \"a\tb\";\t// c",
        "rust",
        &Theme::COLOR,
    )));
}

#[test]
fn a_streamed_block_is_highlighted_as_the_whole_block() {
    use crate::markdown::{MarkdownStream, render};
    for (lang, code) in SAMPLES {
        let doc = format!("Before.\n\n```{lang}\n{code}\n```\n\nAfter.\n");
        let whole = render(&doc, 120, &Theme::COLOR);
        for size in [1, 3, 7] {
            let chars: Vec<char> = doc.chars().collect();
            let mut stream = MarkdownStream::new();
            let mut streamed = Vec::new();
            for delta in chars.chunks(size) {
                stream.push(&delta.iter().collect::<String>());
                streamed.extend(stream.take_finished(120, &Theme::COLOR));
                let _ = stream.tail(120, &Theme::COLOR);
            }
            streamed.extend(stream.finish(120, &Theme::COLOR));
            assert_eq!(streamed, whole, "{lang} in deltas of {size}");
        }
        let code_lines: Vec<Line<'static>> = lines(code, lang, &Theme::COLOR);
        assert_eq!(whole[3..3 + code_lines.len()], code_lines[..], "{lang}");
    }
}

#[test]
fn fence_names_find_their_language() {
    // (fence name, the first name of the language it finds)
    for (lang, language) in [
        ("rust", "rust"),
        ("rs", "rust"),
        ("py", "python"),
        ("python", "python"),
        ("python3", "python"),
        ("py3", "python"),
        ("sh", "sh"),
        ("bash", "sh"),
        ("zsh", "sh"),
        ("shell", "sh"),
        ("console", "sh"),
        ("shellsession", "sh"),
        ("json", "json"),
        ("jsonc", "json"),
        ("json5", "json"),
        ("js", "javascript"),
        ("javascript", "javascript"),
        ("ts", "javascript"),
        ("typescript", "javascript"),
        ("tsx", "javascript"),
        ("jsx", "javascript"),
        ("mjs", "javascript"),
        ("cjs", "javascript"),
        ("yaml", "yaml"),
        ("yml", "yaml"),
        ("toml", "toml"),
        ("go", "go"),
        ("golang", "go"),
        ("c", "c"),
        ("cpp", "cpp"),
        ("c++", "cpp"),
        ("java", "java"),
        ("sql", "sql"),
        ("html", "html"),
        ("xml", "html"),
        ("css", "css"),
        ("diff", "diff"),
        ("patch", "diff"),
        ("dockerfile", "dockerfile"),
        ("makefile", "makefile"),
        ("make", "makefile"),
        ("ruby", "ruby"),
        ("rb", "ruby"),
        ("lua", "lua"),
        ("Rust", "rust"),
        (" PY ", "python"),
    ] {
        assert!(CodeHighlighter::new(lang).is_highlighted(), "{lang}");
        assert_eq!(
            languages::language_for(lang).map(|l| l.names[0]),
            Some(language),
            "{lang}"
        );
    }
}

#[test]
fn no_fence_name_belongs_to_two_languages() {
    let mut seen = std::collections::BTreeMap::new();
    for language in languages::LANGUAGES {
        for name in language.names {
            assert_eq!(seen.insert(*name, language.names[0]), None, "{name}");
        }
    }
}

#[test]
fn an_unknown_or_missing_language_is_plain_code() {
    for lang in ["", "nosuchlang", "text"] {
        let mut h = CodeHighlighter::new(lang);
        assert!(!h.is_highlighted(), "{lang}");
        assert_eq!(h.line("a\tb", &Theme::COLOR), vec![Span::raw("a   b")]);
    }
}

#[test]
fn without_colour_no_colour_is_left_and_bold_stays() {
    let text = styled(&lines("fn main() {}", "rust", &Theme::MONO));
    assert!(!text.contains('#'), "{text}");
    assert!(text.contains("fn main() {}"), "{text}");
    let diff = styled(&lines("--- a/x\n+new", "diff", &Theme::MONO));
    assert_eq!(diff, "⟦bold:--- a/x⟧\n+new\n");
}

#[test]
fn control_characters_in_code_are_neutralized() {
    let spans = CodeHighlighter::new("rust").line("let s = \"\x1b[31m\";", &Theme::COLOR);
    let text: String = spans.iter().map(|s| s.content.as_ref()).collect();
    assert_eq!(text, "let s = \"␛[31m\";");
}

/// The text of `line` as the highlighter must show it, whatever the language.
fn shown(line: &str) -> String {
    let line = line.strip_suffix('\r').unwrap_or(line);
    let mut out = String::new();
    expand_tabs_into(&xcsh_inspect::terminal::neutralize(line), &mut 0, &mut out);
    out
}

proptest! {
    #[test]
    fn no_input_panics_or_loses_text_in_any_language(
        code in "([a-zA-Z0-9_ \t\"'`/*#<>!&$@=:;.,(){}\\[\\]\\\\+-]|é|漢|\u{1b}|\r|\n){0,120}",
    ) {
        for language in languages::LANGUAGES {
            let lang = language.names[0];
            let mut h = CodeHighlighter::new(lang);
            for line in code.lines() {
                let spans = h.line(line, &Theme::COLOR);
                let text: String = spans.iter().map(|s| s.content.as_ref()).collect();
                prop_assert_eq!(text, shown(line), "{}", lang);
            }
        }
    }

    #[test]
    fn no_arbitrary_string_panics(code in any::<String>()) {
        for language in languages::LANGUAGES {
            let mut h = CodeHighlighter::new(language.names[0]);
            for line in code.lines() {
                let text: String = h
                    .line(line, &Theme::COLOR)
                    .iter()
                    .map(|s| s.content.as_ref())
                    .collect();
                prop_assert_eq!(text, shown(line));
            }
        }
    }
}
