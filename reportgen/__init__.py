"""reportgen: the evidence behind a distributed-AI system design, turned into a report a reviewer would accept."""

__version__ = "0.1.0"
