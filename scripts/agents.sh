# agents.sh (sourced, not run): the peer agents' pinned npm packages and their install
# into a cache folder outside the repository, shared by scripts/make-import-samples.sh
# and scripts/bench-peers.sh.
#
#   AGENTS_CACHE          ${XDG_CACHE_HOME:-$HOME/.cache}/xcsh-agents
#   PI_PKG CODEX_PKG CLAUDE_PKG   the pinned versions
#   agents_install NAME SPEC      installs the npm package SPEC into $AGENTS_CACHE/NAME
#                                 (once per version: $AGENTS_CACHE/NAME/.installed)

AGENTS_CACHE=${XDG_CACHE_HOME:-$HOME/.cache}/xcsh-agents
PI_PKG=@mariozechner/pi-coding-agent@0.73.1
CODEX_PKG=@openai/codex@0.171.0
CLAUDE_PKG=@anthropic-ai/claude-code@2.1.332

agents_install() {
    local name=$1 spec=$2 dir=$AGENTS_CACHE/$1
    if [ "$(cat "$dir/.installed" 2>/dev/null)" != "$spec" ]; then
        command -v npm >/dev/null 2>&1 || {
            echo "agents: npm is needed to install $spec (install Node.js 20 or later)" >&2
            return 1
        }
        echo "agents: installing $spec into $dir" >&2
        mkdir -p "$dir"
        npm install --prefix "$dir" --no-audit --no-fund --loglevel=error "$spec" >&2
        echo "$spec" >"$dir/.installed"
    fi
}
