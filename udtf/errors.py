"""The one error type users see: a message anchored at a line:column of their SQL."""


class MatchRecognizeError(Exception):
    """A MATCH_RECOGNIZE problem; ``line``/``column`` are 1-based positions in the user's SQL."""

    def __init__(self, message: str, line: int | None = None, column: int | None = None):
        super().__init__(message)
        self.message = message
        self.line = line
        self.column = column

    def __str__(self) -> str:
        if self.line is None:
            return self.message
        return f"line {self.line}:{self.column}: {self.message}"
