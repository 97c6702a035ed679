"""Carbon intensity from CodeCarbon's bundled data: the one module that touches CodeCarbon's internals.

CodeCarbon's public API is only its trackers; the look-ups used here are internal and have changed between releases,
so the dependency is pinned (codecarbon>=3.3,<3.4) and tests/test_carbon.py holds the contract values.

Importing codecarbon costs 150–250 ms (it brings pandas), so validation and the common look-ups read its bundled
data files directly: a country's mix intensity, a US state's emission rate, a Nordic bidding zone's factor, a GCP
region's impact. Canadian provinces and Chinese provinces are derived by CodeCarbon from energy mixes and name
tables, so those go through its own look-up functions. Contract tests check that both paths agree. CodeCarbon falls
back silently to a world average for unknown places; validating first turns that into a clear input error.
"""

from __future__ import annotations

import csv
import difflib
import importlib.util
import json
import os
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from reportgen.project.model import Location

_MIX = "private_infra/global_energy_mix.json"
_REGION_FILES = {
    "USA": "private_infra/2023/usa_emissions.json",
    "CAN": "private_infra/2023/canada_energy_mix.json",
    "CHN": "private_infra/2023/china_provincial_emissions.json",
}
_NORDIC_FILE = "private_infra/nordic_emissions.json"
_NORDIC_COUNTRIES = {"SWE", "NOR", "FIN"}
_CLOUD_FILE = "cloud/impact.csv"


class UnknownLocation(ValueError):
    """A location CodeCarbon has no data for; the message says what it does have."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(message)
        self.field = field  # the energy.location field at fault: country, region or cloud


@dataclass(frozen=True)
class Intensity:
    g_per_kwh: float
    source: str  # "codecarbon: country FRA", "codecarbon: gcp europe-west9", "given"


@cache
def _data_dir() -> Path:
    spec = importlib.util.find_spec("codecarbon")
    if spec is None or not spec.submodule_search_locations:
        raise UnknownLocation("country", "CodeCarbon is not installed: give energy.location.carbon_intensity instead")
    return Path(next(iter(spec.submodule_search_locations))) / "data"


@cache
def _json(relative: str) -> Any:
    with (_data_dir() / relative).open(encoding="utf-8") as handle:
        return json.load(handle)


@cache
def known_countries() -> dict[str, str]:
    """ISO alpha-3 code → country name, for every country with an energy mix."""
    return {code: str(entry.get("country_name", code)) for code, entry in _json(_MIX).items()}


@cache
def known_regions(country: str) -> tuple[str, ...]:
    if country in _NORDIC_COUNTRIES:
        zones = _json(_NORDIC_FILE)["data"]  # bidding zones: SE1-SE4, NO1-NO5, FI
        return tuple(sorted(z for z in zones if z.startswith(country[:2].replace("SW", "SE"))))
    if country == "CHN":
        return tuple(sorted(name for entry in _json(_REGION_FILES["CHN"])["data"].values()
                            for name in entry["names"]))
    if country in _REGION_FILES:
        return tuple(sorted(k for k in _json(_REGION_FILES[country]) if not k.startswith("_")))
    return ()


@cache
def known_cloud_regions() -> dict[str, tuple[str, ...]]:
    with (_data_dir() / _CLOUD_FILE).open(encoding="utf-8-sig") as handle:  # the file starts with a BOM
        rows = list(csv.DictReader(handle))
    providers: dict[str, list[str]] = {}
    for row in rows:
        providers.setdefault(row["provider"], []).append(row["region"])
    return {provider: tuple(regions) for provider, regions in providers.items()}


def _listing(options: tuple[str, ...] | list[str], limit: int = 8) -> str:
    shown = ", ".join(options[:limit])
    return shown + (f" and {len(options) - limit} more" if len(options) > limit else "")


def validate(*, country: str | None, region: str | None, cloud: str | None) -> None:
    """Raise UnknownLocation unless CodeCarbon has data for exactly this place."""
    if cloud is not None:
        clouds = known_cloud_regions()
        if cloud not in clouds:
            known = _listing(sorted(clouds))
            raise UnknownLocation("cloud", f'CodeCarbon has cloud data for {known} only, not "{cloud}"; '
                                  "give the country the region is in, or an explicit carbon_intensity")
        if region not in clouds[cloud]:
            known = _listing(sorted(clouds[cloud]))
            raise UnknownLocation("region", f'unknown {cloud} region "{region}"; known: {known}')
        return
    if country is None:
        return
    countries = known_countries()
    if country not in countries:
        raise UnknownLocation("country", f'unknown country code "{country}": CodeCarbon knows {len(countries)} '
                              f"countries by ISO 3166 alpha-3 code{_country_hint(country, countries)}")
    if region is not None:
        regions = known_regions(country)
        if not regions:
            raise UnknownLocation("region", f"CodeCarbon has no regional data for {country}; remove the region "
                                  "to use the country's average")
        if region not in regions:
            raise UnknownLocation("region", f'unknown region "{region}" of {country}; known: {_listing(list(regions))}')


def _country_hint(text: str, countries: dict[str, str]) -> str:
    """A did-you-mean for a country written as a name ("Germany") or a two-letter code ("DE")."""
    folded = text.strip().casefold()
    by_name = [code for code, name in countries.items() if name.casefold() == folded]
    if not by_name and len(folded) == 2:  # alpha-2: the alpha-3 codes that begin with it, named
        by_name = sorted(code for code in countries if code.casefold().startswith(folded))
    if not by_name:
        by_name = [code for code, name in countries.items()
                   if name.casefold() in difflib.get_close_matches(folded, [n.casefold() for n in countries.values()],
                                                                   n=1, cutoff=0.8)]
    alpha_2 = " (use the three-letter ISO code)" if len(folded) == 2 else ""
    if not by_name:
        return alpha_2 and " (use the three-letter ISO code, e.g. FRA)"
    named = [f"`{code}` ({countries[code]})" for code in by_name[:4]]
    listed = named[0] if len(named) == 1 else ", ".join(named[:-1]) + f" or {named[-1]}"
    return f"{alpha_2}; did you mean {listed}?"


LBS_PER_MWH_TO_G_PER_KWH = 0.45359237  # CodeCarbon's EmissionsPerKWh.LBS_MWH_TO_KG_KWH × 1000


def look_up(*, country: str | None, region: str | None, cloud: str | None) -> Intensity:
    """The intensity CodeCarbon gives for a validated place (raises UnknownLocation for an unknown one)."""
    validate(country=country, region=region, cloud=cloud)
    direct = read_directly(country=country, region=region, cloud=cloud)
    return direct if direct is not None else look_up_with_codecarbon(country=country, region=region, cloud=cloud)


def read_directly(*, country: str | None, region: str | None, cloud: str | None) -> Intensity | None:
    """The intensity from CodeCarbon's data files, for the places whose value is stored as is; else None."""
    if cloud is not None:
        with (_data_dir() / _CLOUD_FILE).open(encoding="utf-8-sig") as handle:
            row = next(r for r in csv.DictReader(handle) if r["provider"] == cloud and r["region"] == region)
        return Intensity(float(row["impact"]), f"codecarbon: {cloud} {region}")
    assert country is not None
    if region is None:
        return Intensity(float(_json(_MIX)[country]["carbon_intensity"]), f"codecarbon: country {country}")
    source = f"codecarbon: country {country}, region {region}"
    if country == "USA":
        return Intensity(float(_json(_REGION_FILES["USA"])[region]["emissions"]) * LBS_PER_MWH_TO_G_PER_KWH, source)
    if country in _NORDIC_COUNTRIES:
        return Intensity(float(_json(_NORDIC_FILE)["data"][region]["emission_factor"]), source)
    return None


def look_up_with_codecarbon(*, country: str | None, region: str | None, cloud: str | None) -> Intensity:
    """The intensity from CodeCarbon's own look-up functions (no tracker, no network)."""
    os.environ.setdefault("CODECARBON_LOG_LEVEL", "error")
    from codecarbon.core.emissions import Emissions
    from codecarbon.core.units import Energy
    from codecarbon.external.geography import CloudMetadata, GeoMetadata
    from codecarbon.input import DataSource

    emissions = Emissions(DataSource())  # type: ignore[no-untyped-call]
    one_kwh = Energy(kWh=1.0)
    if cloud is not None:
        kg = emissions.get_cloud_emissions(one_kwh, CloudMetadata(provider=cloud, region=region))
        return Intensity(kg * 1000.0, f"codecarbon: {cloud} {region}")
    assert country is not None
    if region is not None:
        kg = emissions.get_region_emissions(one_kwh, GeoMetadata(country_iso_code=country, region=region))
        return Intensity(kg * 1000.0, f"codecarbon: country {country}, region {region}")
    kg = emissions.get_country_emissions(one_kwh, GeoMetadata(country_iso_code=country))
    return Intensity(kg * 1000.0, f"codecarbon: country {country}")


def intensity_for(location: Location | None) -> Intensity | None:
    """The carbon intensity of a project's location: given explicitly, or from CodeCarbon's data."""
    if location is None:
        return None
    if location.carbon_intensity is not None:
        return Intensity(location.carbon_intensity * 1000.0 * 3.6e6, "given")  # kg/J → g/kWh
    return look_up(country=location.country, region=location.region, cloud=location.cloud)
