"""The WhodunitBench format: reader and writer of ``Dataset/<game>/env_p_all.json`` + ``img/``,
the inline-MCQ parser, and the recorded agent logs (``Agent_*.json``, see ``agent_logs``)."""
from exporters.whodunitbench.mcq import ParsedMCQ, parse_inline_mcq, render_inline_mcq, strip_list_numbering
from exporters.whodunitbench.reader import read_whodunitbench
from exporters.whodunitbench.writer import write_whodunitbench

__all__ = [
    "ParsedMCQ",
    "parse_inline_mcq",
    "read_whodunitbench",
    "render_inline_mcq",
    "strip_list_numbering",
    "write_whodunitbench",
]
