"""A project as flat (field path, value, unit) leaves: the appendix's normalized inputs and the diff of inputs."""

from __future__ import annotations

from dataclasses import dataclass

from reportgen.project.spec import Items, Quantity, Section, spec_fields
from reportgen.wording import quantity

Scalar = float | int | bool | str


@dataclass(frozen=True)
class Leaf:
    path: str  # e.g. "scaling.runs[3].compute"
    value: Scalar | tuple[Scalar, ...]  # a float in SI units
    unit: str  # the SI unit of a quantity, "" otherwise

    @property
    def shown(self) -> str:
        if isinstance(self.value, tuple):
            if len(self.value) > MAX_SHOWN_ITEMS:  # 200,000 workers: a line, not a 2 MB appendix
                head = ", ".join(_show(v) for v in self.value[:SHOWN_HEAD])
                ordered = sorted(self.value)
                return (f"{head}, … ({len(self.value):,} values; least {_show(ordered[0])}, median "
                        f"{_show(ordered[len(ordered) // 2])}, most {_show(ordered[-1])})")
            return ", ".join(_show(v) for v in self.value)
        return _show(self.value)

    @property
    def written(self) -> str:
        """The value as a person writes it, with its unit: "50.0 GB/s", not "5e+10 B/s"."""
        return quantity(self.value, self.unit) if self.unit and isinstance(self.value, int | float) else self.shown


MAX_SHOWN_ITEMS = 32  # a list (per-worker times) shown whole up to this many values; past it, its head and spread
SHOWN_HEAD = 8


def _show(value: Scalar) -> str:
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, float):
        return f"{value:.6g}"
    return str(value)


def flatten(obj: object, *, currency: str = "USD", path: str = "") -> list[Leaf]:
    """Every given leaf of a project (or a section of one), in field order."""
    leaves: list[Leaf] = []
    for name, spec, _ in spec_fields(type(obj)):
        value = getattr(obj, name)
        where = f"{path}.{name}" if path else name
        if value is None or value == ():
            continue
        if isinstance(spec, Section):
            leaves += flatten(value, currency=currency, path=where)
        elif isinstance(spec, Items) and isinstance(spec.item, Section):
            for index, item in enumerate(value):
                leaves += flatten(item, currency=currency, path=f"{where}[{index}]")
        elif isinstance(quantity := getattr(spec, "item", spec), Quantity):
            leaves.append(Leaf(where, value, quantity.dimension.si_unit.replace("currency_unit", currency)))
        else:
            leaves.append(Leaf(where, value, ""))
    return leaves
