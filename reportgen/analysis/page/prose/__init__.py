"""Page 1's prose: the typed results of the analyses turned into the sentences a reviewer writes, in one package.

The analyses return facts (a verdict per regime, a gap, an optimum, a lever with its values); these modules alone
word them: `summary` (page 1, methods.md#page-1-and-the-next-action), `actions` (the one next action and its rank)
and `levers` (a lever's change, methods.md#the-goals-levers). results.json carries their sentences, so that the
report and a script read the same words.
"""
