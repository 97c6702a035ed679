"""Contract tests of the CodeCarbon data reportgen relies on (values of codecarbon 3.3.x, see LIBRARIES.md)."""

from __future__ import annotations

import pytest

from reportgen.project import carbon


@pytest.mark.parametrize(("location", "grams", "source"), [
    ({"country": "FRA"}, 56.04, "codecarbon: country FRA"),
    ({"country": "DEU"}, 380.95, "codecarbon: country DEU"),
    ({"country": "USA"}, 369.47, "codecarbon: country USA"),
    ({"country": "USA", "region": "california"}, 179.06, "codecarbon: country USA, region california"),
    ({"cloud": "gcp", "region": "europe-west9"}, 34.0, "codecarbon: gcp europe-west9"),
])
def test_contract_values(location: dict[str, str], grams: float, source: str) -> None:
    intensity = carbon.look_up(country=location.get("country"), region=location.get("region"),
                               cloud=location.get("cloud"))
    assert intensity.g_per_kwh == pytest.approx(grams, abs=0.01)
    assert intensity.source == source


@pytest.mark.parametrize(("location", "field", "message"), [
    ({"country": "FR"}, "country", "three-letter ISO code"),
    ({"country": "ZZZ"}, "country", "unknown country code"),
    ({"country": "USA", "region": "TX"}, "region", "unknown region"),
    ({"country": "DEU", "region": "bavaria"}, "region", "no regional data"),
    ({"cloud": "aws", "region": "us-east-1"}, "cloud", "gcp only"),
    ({"cloud": "gcp", "region": "mars-1"}, "region", "unknown gcp region"),
])
def test_unknown_places_are_refused_not_averaged(location: dict[str, str], field: str, message: str) -> None:
    with pytest.raises(carbon.UnknownLocation, match=message) as caught:
        carbon.look_up(country=location.get("country"), region=location.get("region"), cloud=location.get("cloud"))
    assert caught.value.field == field


@pytest.mark.parametrize("location", [
    {"country": "FRA"}, {"country": "IND"}, {"country": "BRA"}, {"country": "USA", "region": "texas"},
    {"country": "USA", "region": "virginia"}, {"country": "SWE", "region": "SE3"}, {"country": "NOR", "region": "NO1"},
    {"cloud": "gcp", "region": "us-central1"}, {"cloud": "gcp", "region": "asia-east1"},
])
def test_direct_reads_agree_with_codecarbons_look_up(location: dict[str, str]) -> None:
    where = {"country": location.get("country"), "region": location.get("region"), "cloud": location.get("cloud")}
    direct = carbon.read_directly(**where)
    assert direct is not None
    assert direct == carbon.look_up_with_codecarbon(**where) or (
        direct.g_per_kwh == pytest.approx(carbon.look_up_with_codecarbon(**where).g_per_kwh, rel=1e-12))


def test_derived_regions_use_codecarbon() -> None:
    assert carbon.read_directly(country="CAN", region="ontario", cloud=None) is None
    assert carbon.look_up(country="CAN", region="ontario", cloud=None).g_per_kwh == pytest.approx(64.72, abs=0.01)


def test_every_validated_country_has_its_own_intensity() -> None:
    """Validation and look-up read the same data: no accepted country silently gets the world average."""
    countries = carbon.known_countries()
    assert len(countries) > 150 and "FRA" in countries
    mix = carbon._json(carbon._MIX)
    for code in ("FRA", "IND", "CAN", "GBR"):
        assert carbon.look_up(country=code, region=None, cloud=None).g_per_kwh == pytest.approx(
            mix[code]["carbon_intensity"])
