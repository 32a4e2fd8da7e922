"""Which files Kenning indexes, as what kind, and which of them are tests.

A document kind is "markdown", "text", "code:<lang>" or one of the extracted formats
("pdf", "html", "notebook", "docx", "odt", "eml", "mbox": see ingest/extract/);
`classify` returns None for anything else so the walker can skip it without reading it.
"""

from __future__ import annotations

import re
from pathlib import PurePosixPath

from kenning.core.formats import EXTRACTED_SUFFIXES

MARKDOWN = "markdown"
TEXT = "text"
MBOX = "mbox"  # also a file without an extension whose first line is a mailbox's (ingest.reading)
CODE_PREFIX = "code:"

_MARKDOWN_EXTS = frozenset({".md", ".markdown", ".mdx", ".mkd", ".mdown"})
_TEXT_EXTS = frozenset({".txt", ".text", ".rst", ".org", ".adoc", ".asciidoc", ".asc"})

# Extension -> language name. The name ends up in `code:<lang>` and in `ext:` filters'
# neighbourhood, so it is the common short name, not the extension.
_CODE_EXTS: dict[str, str] = {
    ".py": "python",
    ".pyi": "python",
    ".pyw": "python",
    ".js": "javascript",
    ".mjs": "javascript",
    ".cjs": "javascript",
    ".jsx": "jsx",
    ".ts": "typescript",
    ".mts": "typescript",
    ".cts": "typescript",
    ".tsx": "tsx",
    ".go": "go",
    ".rs": "rust",
    ".java": "java",
    ".kt": "kotlin",
    ".kts": "kotlin",
    ".c": "c",
    ".h": "c",
    ".cc": "cpp",
    ".cpp": "cpp",
    ".cxx": "cpp",
    ".hpp": "cpp",
    ".hh": "cpp",
    ".hxx": "cpp",
    ".m": "objc",
    ".mm": "objc",
    ".cs": "csharp",
    ".fs": "fsharp",
    ".rb": "ruby",
    ".php": "php",
    ".swift": "swift",
    ".scala": "scala",
    ".sc": "scala",
    ".groovy": "groovy",
    ".gradle": "groovy",
    ".dart": "dart",
    ".sh": "shell",
    ".bash": "shell",
    ".zsh": "shell",
    ".fish": "fish",
    ".ps1": "powershell",
    ".sql": "sql",
    ".lua": "lua",
    ".r": "r",
    ".jl": "julia",
    ".hs": "haskell",
    ".ml": "ocaml",
    ".mli": "ocaml",
    ".ex": "elixir",
    ".exs": "elixir",
    ".erl": "erlang",
    ".hrl": "erlang",
    ".clj": "clojure",
    ".cljs": "clojure",
    ".cljc": "clojure",
    ".el": "elisp",
    ".lisp": "lisp",
    ".scm": "scheme",
    ".nim": "nim",
    ".zig": "zig",
    ".pl": "perl",
    ".pm": "perl",
    ".vim": "vim",
    ".toml": "toml",
    ".yaml": "yaml",
    ".yml": "yaml",
    ".json": "json",
    ".jsonc": "json",
    ".json5": "json",
    ".ini": "ini",
    ".cfg": "ini",
    ".conf": "ini",
    ".properties": "ini",
    ".xml": "xml",
    ".xsd": "xml",
    ".plist": "xml",
    ".css": "css",
    ".scss": "scss",
    ".sass": "scss",
    ".less": "less",
    ".vue": "vue",
    ".svelte": "svelte",
    ".astro": "astro",
    ".proto": "protobuf",
    ".graphql": "graphql",
    ".gql": "graphql",
    ".tf": "terraform",
    ".tfvars": "terraform",
    ".hcl": "hcl",
    ".nix": "nix",
    ".cmake": "cmake",
    ".mk": "make",
    ".dockerfile": "dockerfile",
    ".tex": "latex",
}

# Whole file names that are code although they have no (useful) extension.
_CODE_NAMES: dict[str, str] = {
    "makefile": "make",
    "gnumakefile": "make",
    "dockerfile": "dockerfile",
    "containerfile": "dockerfile",
    "cmakelists.txt": "cmake",
    "justfile": "make",
    "rakefile": "ruby",
    "gemfile": "ruby",
    "vagrantfile": "ruby",
    "procfile": "shell",
    "jenkinsfile": "groovy",
    ".bashrc": "shell",
    ".zshrc": "shell",
    ".profile": "shell",
    ".editorconfig": "ini",
    ".gitignore": "ini",
    ".gitattributes": "ini",
}

# Extension-less prose files every repository has.
_TEXT_NAME = re.compile(
    r"(readme|license|licence|copying|changelog|changes|history|news|authors|"
    r"contributors|contributing|notice|todo|install|thanks|credits|maintainers|"
    r"code_of_conduct|security|patents)([-_.][\w.-]*)?",
    re.IGNORECASE,
)

_TEST_DIRS = frozenset({"tests", "test", "__tests__", "fixtures", "spec", "specs", "testdata"})
_TEST_FILE = re.compile(
    r"(test_.+\.py|.+_test\.py|conftest\.py|.+_test\.go|"
    r".+\.(test|spec)\.(ts|js|tsx|jsx|mjs|cjs|mts|cts)|"
    r".+Tests?\.(java|kt|cs|swift|scala)|.+_spec\.rb|.+_test\.rb|test_.+\.rb)"
)


def classify(rel_path: str) -> str | None:
    """The document kind of a path, or None when Kenning does not index it."""
    name = PurePosixPath(rel_path.replace("\\", "/")).name
    lower = name.lower()
    if lower in _CODE_NAMES:
        return CODE_PREFIX + _CODE_NAMES[lower]
    suffix = PurePosixPath(lower).suffix
    if suffix in _MARKDOWN_EXTS:
        return MARKDOWN
    if suffix in _TEXT_EXTS:
        return TEXT
    if suffix in EXTRACTED_SUFFIXES:  # PDF, HTML, notebooks, Office, mail: ingest/extract/
        return EXTRACTED_SUFFIXES[suffix]
    if suffix in _CODE_EXTS:
        return CODE_PREFIX + _CODE_EXTS[suffix]
    if lower.startswith("dockerfile.") or lower.endswith(".dockerfile"):
        return CODE_PREFIX + "dockerfile"
    # "LICENSE-MIT" yes, "install.exe" no: only bare names or dash/underscore variants.
    if _TEXT_NAME.fullmatch(name) and (not suffix or "-" in name or "_" in name):
        return TEXT
    return None


def has_no_extension(rel_path: str) -> bool:
    """A name without a `.ext` (Thunderbird keeps its mailboxes so: `Inbox`, `Sent`)."""
    return not PurePosixPath(rel_path.replace("\\", "/")).suffix


def code_lang(kind: str) -> str | None:
    """The language of a `code:<lang>` kind, None for prose kinds."""
    return kind[len(CODE_PREFIX) :] if kind.startswith(CODE_PREFIX) else None


def is_code(kind: str) -> bool:
    return kind.startswith(CODE_PREFIX)


def is_test_path(rel_path: str) -> bool:
    """True for paths that hold tests or test data (left out of search by default)."""
    parts = PurePosixPath(rel_path.replace("\\", "/")).parts
    if not parts:
        return False
    if any(part.lower() in _TEST_DIRS for part in parts[:-1]):
        return True
    return bool(_TEST_FILE.fullmatch(parts[-1]))
