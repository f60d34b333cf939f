//! The approval question in the live area: its keys, its answer, and what `a`/`A` say.

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use xcsh_machine::{ApprovalScope, Verdict};
use xcsh_runtime::{ApprovalAnswer, ApprovalRequest};

use super::{Action, App, Focus, LiveQuestion};
use crate::approval::{Approval, Choice};
use crate::cells::Level;

/// A draft with a key this recent (ms) is being typed: a question that opens then
/// leaves it the keys, so that a key typed ahead (`a`, `y`) never answers.
pub const TYPING_MS: u64 = 1_000;

impl App {
    /// An approval question came at `now_ms`; `current` is the content of the file
    /// an edit or write would change (read by the controller).
    pub fn ask(&mut self, request: &ApprovalRequest, current: Option<&str>, now_ms: u64) {
        let call = &request.call;
        self.question = Some(LiveQuestion {
            call_id: call.id.clone(),
            tool: call.name.clone(),
            approval: Approval::of_request(request, current),
            message: None,
        });
        // The question takes the keys, as Claude Code's and Codex's do, also over a
        // draft: the draft stays in the input, untouched, and has the keys again once
        // the question is answered (Esc or Tab goes to it meanwhile). But keys typed
        // ahead never answer: while a draft is being typed (a key in the last
        // `TYPING_MS`), the keys stay with it, and Esc goes to the question.
        let typing = !self.editor.is_empty()
            && self
                .key_at_ms
                .is_some_and(|at| now_ms.saturating_sub(at) < TYPING_MS);
        self.focus = if typing {
            Focus::Editor
        } else {
            Focus::Question
        };
    }

    /// Alt-KEY for an answer key, pressed while the question waits behind the input:
    /// a terminal sends Esc and a key typed quickly as Alt-KEY, and Esc there goes
    /// back to the question, so this goes back to it and answers with KEY. `None`
    /// for any other key or state (the key is the input's).
    pub fn alt_answer(&mut self, key: KeyEvent) -> Option<Vec<Action>> {
        let waits = self.question.as_ref().is_some_and(|q| q.message.is_none())
            && self.focus == Focus::Editor
            && self.editor.popup().is_none()
            && !self.editor.is_searching();
        let answer = waits
            && key.modifiers.contains(KeyModifiers::ALT)
            && matches!(key.code, KeyCode::Char(c) if Choice::from_key(c).is_some());
        if !answer {
            return None;
        }
        self.focus = Focus::Question;
        Some(self.question_key(key))
    }

    /// The open question (Ctrl-T while asking shows its whole preview).
    pub fn question(&self) -> Option<&Approval> {
        self.question.as_ref().map(|q| &q.approval)
    }

    pub(super) fn question_key(&mut self, key: KeyEvent) -> Vec<Action> {
        let Some(q) = &mut self.question else {
            return Vec::new();
        };
        if let Some(message) = &mut q.message {
            match key.code {
                KeyCode::Enter => {
                    let message = message.trim().to_string();
                    return self.answer(Verdict::Deny, ApprovalScope::Once, Some(message));
                }
                KeyCode::Esc => q.message = None,
                KeyCode::Backspace => {
                    message.pop();
                }
                KeyCode::Char(c) if !key.modifiers.contains(KeyModifiers::CONTROL) => {
                    message.push(c)
                }
                _ => {}
            }
            return Vec::new();
        }
        // Ctrl-KEY never answers (Ctrl-A is no `A`); Alt-KEY is KEY, as a terminal
        // sends Esc and KEY typed quickly.
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        match key.code {
            KeyCode::Char(_) if ctrl => Vec::new(),
            KeyCode::Char(c) => match Choice::from_key(c) {
                Some(Choice::DenyWithMessage) => {
                    q.message = Some(String::new());
                    Vec::new()
                }
                Some(Choice::Deny) => self.answer(Verdict::Deny, ApprovalScope::Once, None),
                Some(choice) => {
                    let scope = choice.scope().unwrap_or(ApprovalScope::Once);
                    self.answer(Verdict::Allow, scope, None)
                }
                // Not an answer: the user is typing (a steer, `/status`); the key
                // goes to the input and the question waits.
                None => {
                    self.focus = Focus::Editor;
                    self.editor.on_key(key);
                    Vec::new()
                }
            },
            KeyCode::Esc | KeyCode::Tab => {
                self.focus = Focus::Editor;
                Vec::new()
            }
            _ => Vec::new(),
        }
    }

    fn answer(
        &mut self,
        verdict: Verdict,
        scope: ApprovalScope,
        message: Option<String>,
    ) -> Vec<Action> {
        if let Some(q) = self.question.take()
            && verdict == Verdict::Allow
            && let Some(text) = crate::cells::grant_notice(&q.tool, scope)
        {
            self.notice(Level::Info, text);
        }
        self.focus = Focus::Editor;
        let message = message.filter(|m| !m.is_empty());
        vec![Action::Answer(ApprovalAnswer {
            verdict,
            scope,
            message,
        })]
    }
}
