"""What the report says of the analyses: the lint's findings (`lint.py`), page 1's facts computed once
(`page_one.py`: the state, the constraints, every way considered from `candidates.py` ordered by
`candidate_order.py`, the next action; their types in `page_one_facts.py`) and, in `prose/`, page 1's sentences.
The only layer that writes English, and it decides nothing the layers below have not.
(docs/architecture.md#the-analysis-layers)
"""
