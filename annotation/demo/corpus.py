"""The demo's synthetic news corpus: stories that read like news, with planted rare topics (the set-up is setup.py).

Each record is a short wire story — a headline (`title`) and two or three paragraphs
(`body`) — composed from sentence templates and invented names written for this
module (no copied text). Most stories are about other things (company results,
central banks, elections, sport, weather, technology...). A story of a planted topic
(coffee, cocoa, gold, shipping) is about that topic from its first sentence, in words
a reader sees ("arabica futures", "cocoa prices", "bullion", "container lines").

The demo's two keyword classifiers of a topic search different fields with different
terms: the headline for `title_words`, the body for `body_words`. A relevant story gets
a headline with one of its title words with probability `title_rate` and,
independently, a body sentence with one of its body words with probability
`body_rate`; otherwise the headline and the body name the topic only in other words
(templates that contain no classifier term). So the two filters are conditionally
independent given relevance by construction, as seed 000 assumes.

Stories of no topic are near misses in two ways, so judging means reading:
- at `passing_rate` a story mentions the topic in passing without any classifier term
  ("Delegates broke for coffee before the vote", "gold was little changed");
- at `noise_rate` per field a story carries a classifier term out of context: a
  headline ("Espresso machine maker recalls 40,000 appliances", "Swimmer takes gold")
  or a body sentence ("a blood vessel", "a skin cream made with cocoa butter") —
  the classifiers' false positives.

The planted topics are written to the metadata field `topics` (a list): the truth a
simulated crowd reads (`--truth-field topics --truth-value coffee`). Generation is
seeded (Python's `random.Random`, stable across versions): the same (documents, seed,
topics) gives the same file.
"""
from __future__ import annotations

import gzip
import json
import random
import string
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from datetime import date, timedelta
from pathlib import Path


@dataclass(frozen=True)
class TopicWriting:
    """The templates of one planted topic. `{name}` fields are filled from the story's cast (below)."""

    reader_words: tuple[str, ...]  # words by which a reader sees the topic (at least one in every lead)
    # Angles of a story, as three parallel tuples: a headline with one of the topic's title words, the
    # same headline without any classifier term of any topic, and the first sentence (names the topic
    # in reader words, no classifier term).
    headlines: tuple[str, ...]
    plain_headlines: tuple[str, ...]
    leads: tuple[str, ...]
    sentences: tuple[str, ...]  # more of the story, no classifier term
    term_sentences: tuple[str, ...]  # about the topic, each contains one of the topic's body words
    passing: tuple[str, ...]  # a mention in passing in another story, no classifier term
    # (beat, headline with a title word out of context, its lead): the rest of the story comes from the beat
    false_headlines: tuple[tuple[str, str, str], ...]
    false_sentences: tuple[str, ...]  # a body word out of context, fits any story

    def __post_init__(self) -> None:
        if not len(self.headlines) == len(self.plain_headlines) == len(self.leads) > 0:
            raise ValueError("headlines, plain_headlines and leads are parallel: give as many of each")


@dataclass(frozen=True)
class PlantedTopic:
    name: str
    prevalence: float
    title_words: tuple[str, ...]
    body_words: tuple[str, ...]
    title_rate: float = 0.6
    body_rate: float = 0.7
    noise_rate: float = 0.002  # per field: a classifier term out of context in a story of no topic
    passing_rate: float = 0.01  # a mention in passing (no classifier term) in a story of no topic
    writing: TopicWriting | None = None


# --- the cast: names and numbers a story draws once and reuses ---------------------------------

_FIRST = (
    "Ana", "Ben", "Carla", "David", "Elena", "Farid", "Grace", "Hiro", "Ines", "Jonas", "Kofi", "Lena", "Marco",
    "Nadia", "Omar", "Priya", "Rafael", "Sofia", "Tomas", "Ursula", "Viktor", "Wen", "Yara", "Zoltan", "Amara",
    "Lucas", "Mei", "Pedro", "Hana", "Kwame",
)
_LAST = (
    "Almeida", "Brandt", "Castillo", "Dlamini", "Eriksen", "Ferreira", "Grieve", "Haddad", "Ivanova", "Jensen",
    "Kowalski", "Lindqvist", "Moreau", "Nakamura", "Okafor", "Petrov", "Quiroga", "Rossi", "Santos", "Tanaka",
    "Usman", "Varga", "Whitlock", "Xavier", "Yilmaz", "Zeller", "Mensah", "Nguyen", "Oyelaran", "Pacheco",
)
_COMPANIES = (
    "Norland Holdings", "Vestra Group", "Kalder Industries", "Brightwater Foods", "Amberline Retail",
    "Tessaro Motors", "Pinecrest Bank", "Orvane Pharma", "Halvick Steel", "Marlow & Finch", "Quantell Systems",
    "Rivergate Energy", "Sorrento Telecom", "Ostara Insurance", "Kestrel Airlines", "Lumen Grid", "Bexley Homes",
    "Fairhaven Logistics", "Nordvik Paper", "Cobalt Street Media", "Harrowgate Chemicals", "Silvan Software",
)
_TRADERS = ("Castellan Commodities", "Meridian Trading", "Alder & Rowe", "Sunda Agri", "Portavia Merchants")
_CARRIERS = ("Caravel Lines", "Northsea Carriers", "Bluefin Container Line", "Halcyon Maritime", "Orient Star Lines")
_MINERS = ("Ridgeback Resources", "Aurora Peak Metals", "Karoo Minerals", "Sierra Alta Mining")
_COUNTRIES = (
    "Germany", "Japan", "India", "Kenya", "Mexico", "Canada", "Poland", "Chile", "South Africa", "Turkey",
    "Australia", "Spain", "Nigeria", "Thailand", "Argentina", "Sweden",
)
_CITIES = (
    "Lisbon", "Osaka", "Nairobi", "Toronto", "Krakow", "Santiago", "Cape Town", "Izmir", "Perth", "Valencia",
    "Lagos", "Chiang Mai", "Rosario", "Gothenburg", "Leeds", "Lyon", "Denver", "Pune",
)
_TEAMS = ("Riverside United", "Northgate Rovers", "Harbour City", "Eastfield Athletic", "Valley Rangers", "Westbrook FC")
_PARTIES = ("the Reform Alliance", "the Social Democrats", "the National Centre", "the Green Coalition", "the Liberal Front")
_PRODUCTS = ("smartphone", "electric van", "payments app", "cloud service", "heat pump", "diabetes drug", "e-reader")
_HOSPITALS = ("St Anne's Hospital", "the University Medical Centre", "Lakeside General Hospital", "the Royal Infirmary")
_EVENTS = ("200-metre freestyle", "marathon", "sprint relay", "time trial", "pole vault", "100-metre breaststroke")
_MONTHS = (
    "January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
    "November", "December",
)
_WEEKDAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday")
_COFFEE_COUNTRIES = ("Brazil", "Vietnam", "Colombia", "Ethiopia", "Honduras", "Uganda", "Peru")
_COFFEE_REGIONS = ("Minas Gerais", "the Central Highlands", "Huila", "Sidama", "Sul de Minas", "Copan")
_COCOA_COUNTRIES = ("Ghana", "Ecuador", "Cameroon", "Nigeria", "Ivory Coast")
_PORTS = ("Rotterdam", "Singapore", "Shanghai", "Los Angeles", "Felixstowe", "Antwerp", "Busan", "Santos")
_CANALS = ("the Suez Canal", "the Panama Canal", "the Bab el-Mandeb strait", "the Strait of Malacca")
_ROUTES = ("Asia-Europe", "transpacific", "transatlantic", "Asia-Mediterranean")


def _person(rng: random.Random) -> str:
    return f"{rng.choice(_FIRST)} {rng.choice(_LAST)}"


def _pct(low: float, high: float) -> Callable[[random.Random], str]:
    return lambda rng: f"{rng.uniform(low, high):.1f}%"


_VALUES: dict[str, Callable[[random.Random], str]] = {
    "person": _person, "person2": _person, "analyst": _person, "athlete": _person,
    "company": lambda r: r.choice(_COMPANIES), "company2": lambda r: r.choice(_COMPANIES),
    "trader": lambda r: r.choice(_TRADERS), "carrier": lambda r: r.choice(_CARRIERS),
    "miner": lambda r: r.choice(_MINERS),
    "country": lambda r: r.choice(_COUNTRIES), "country2": lambda r: r.choice(_COUNTRIES),
    "city": lambda r: r.choice(_CITIES), "city2": lambda r: r.choice(_CITIES),
    "team": lambda r: r.choice(_TEAMS), "team2": lambda r: r.choice(_TEAMS),
    "party": lambda r: r.choice(_PARTIES), "product": lambda r: r.choice(_PRODUCTS),
    "hospital": lambda r: r.choice(_HOSPITALS), "event": lambda r: r.choice(_EVENTS),
    "month": lambda r: r.choice(_MONTHS), "weekday": lambda r: r.choice(_WEEKDAYS),
    "pct": _pct(0.5, 9.5), "pct2": _pct(0.5, 9.5), "small_pct": _pct(0.1, 1.9), "rate": _pct(1.0, 6.5),
    "millions": lambda r: f"${r.randint(12, 980)} million", "billions": lambda r: f"${r.uniform(1.1, 24.0):.1f} billion",
    "thousands": lambda r: f"{r.randint(2, 90) * 1000:,}", "score": lambda r: f"{r.randint(1, 4)}-{r.randint(0, 3)}",
    "minutes": lambda r: str(r.randint(55, 89)), "jobs": lambda r: f"{r.randint(2, 40) * 50:,}",
    "temperature": lambda r: str(r.randint(38, 46)), "millimetres": lambda r: str(r.randint(120, 380)),
    "harvest_pct": lambda r: f"{r.randint(15, 85)}%",
    "coffee_country": lambda r: r.choice(_COFFEE_COUNTRIES), "coffee_region": lambda r: r.choice(_COFFEE_REGIONS),
    "coffee_price": lambda r: f"{r.uniform(160, 390):.2f} cents per lb",
    "robusta_price": lambda r: f"${r.randint(2400, 5200):,} a tonne",
    "bags": lambda r: f"{r.uniform(0.8, 6.5):.1f} million bags",
    "cocoa_country": lambda r: r.choice(_COCOA_COUNTRIES), "cocoa_price": lambda r: f"${r.randint(2300, 9800):,} a tonne",
    "tonnes": lambda r: f"{r.randint(20, 480) * 1000:,} tonnes",
    "gold_tonnes": lambda r: f"{r.randint(120, 400)} tonnes",
    "gold_price": lambda r: f"${r.randint(1850, 2750):,} an ounce", "ounces": lambda r: f"{r.randint(40, 900) * 1000:,} ounces",
    "port": lambda r: r.choice(_PORTS), "port2": lambda r: r.choice(_PORTS), "canal": lambda r: r.choice(_CANALS),
    "route": lambda r: r.choice(_ROUTES), "index_points": lambda r: f"{r.randint(900, 4200):,} points",
    "boxes": lambda r: f"{r.randint(8, 24) * 1000:,}", "days": lambda r: str(r.randint(3, 14)),
}
# Words that follow the story's one direction (up or down), so a headline and its body agree.
_DIRECTED: dict[str, tuple[str, str]] = {
    "rose": ("rose", "fell"), "climbs": ("climbs", "slips"), "climb": ("climb", "slip"),
    "higher": ("higher", "lower"), "rise": ("rise", "fall"), "gain": ("gain", "loss"),
    "rising": ("rising", "falling"), "Rising": ("Rising", "Falling"), "jumps": ("jumps", "drops"),
    "strong": ("strong", "weak"), "tighter": ("tighter", "looser"), "beats": ("beats", "misses"),
}


class _Cast(dict):
    """The names and numbers of one story: each field is drawn on first use and then reused."""

    def __init__(self, rng: random.Random) -> None:
        super().__init__()
        self._rng = rng
        self._up: bool | None = None

    def __missing__(self, key: str) -> str:
        if key in _DIRECTED:
            if self._up is None:
                self._up = self._rng.random() < 0.5
            value = _DIRECTED[key][0 if self._up else 1]
        else:
            # "company2" differs from "company" (and the other way round) when both are in the story.
            other = self.get(key[:-1] if key.endswith("2") else key + "2")
            value = _VALUES[key](self._rng)
            while value == other:
                value = _VALUES[key](self._rng)
        self[key] = value
        return value


def template_fields(template: str) -> set[str]:
    """The cast fields a template uses (every one must be in _VALUES or _DIRECTED)."""
    return {name for _, name, _, _ in string.Formatter().parse(template) if name}


# --- the planted topics --------------------------------------------------------------------------

COFFEE_WRITING = TopicWriting(
    reader_words=("coffee", "arabica"),
    # Parallel tuples: angle i is (headlines[i] or plain_headlines[i], leads[i]).
    headlines=(
        "Arabica futures {climb} as traders watch {coffee_region} weather",
        "Coffee prices {climb} as {coffee_country} exporters hold back sales",
        "{coffee_country} coffee exports {rise} in {month}",
        "Dry {month} leaves coffee growers in {coffee_region} counting the cost",
        "Cafés raise espresso prices as wholesale costs bite",
        "{trader} sees coffee deficit next season",
        "Arabica premium widens as fine grades run short",
    ),
    plain_headlines=(
        "Bean prices {climb} as traders watch weather in {coffee_region}",
        "Bean prices {climb} as {coffee_country} exporters hold back sales",
        "{coffee_country} bean exports {rise} in {month}, exporters' group says",
        "Dry spell in {coffee_region} puts next harvest at risk",
        "Cafés raise prices for a cup as wholesale bean costs bite",
        "{trader} sees a shortfall in bean supplies next season",
        "Premium for fine mild beans widens as supplies run short",
    ),
    leads=(
        "Arabica coffee futures {rose} {pct} in New York on {weekday}, to {coffee_price}, as traders weighed "
        "forecasts for {coffee_region}.",
        "Coffee prices {rose} for a third session on {weekday} as exporters in {coffee_country} held back "
        "sales, traders said.",
        "{coffee_country}'s coffee exports {rose} {pct} in {month} from a year earlier, to {bags}, according "
        "to the national exporters' association.",
        "Coffee growers in {coffee_region} are counting the cost of an unusually dry {month}, which has left "
        "trees stressed weeks before the flowering.",
        "Cafés in {country} are raising the price of a cup of coffee for the second time this year as "
        "wholesale bean costs stay high, an industry survey showed.",
        "{trader}, one of the largest traders of green coffee, said on {weekday} it expects world demand to "
        "exceed production by {bags} next season.",
        "The premium paid for high-quality arabica coffee from {coffee_country} over the benchmark widened "
        "this week as fine grades ran short, dealers said.",
    ),
    sentences=(
        "Traders said the market remained sensitive to weather forecasts for {coffee_country}.",
        "{analyst}, an analyst at {trader}, said beans from the new harvest would not reach export "
        "warehouses before {month}.",
        "Exchange-monitored stocks have fallen for {days} consecutive weeks, a sign of tight nearby supply.",
        "Growers have been reluctant to sell at current levels, expecting prices to keep {rising}.",
        "A stronger currency in {coffee_country} also made farmers less willing to part with their beans.",
        "Cafés and supermarket chains have already raised retail prices twice this year.",
        "Speculative funds have added to the swings, holding large positions in the New York contract.",
        "Harvesting in {coffee_region} is about {harvest_pct} complete, a local cooperative said.",
        "Importers in Europe said they were buying only for immediate needs.",
        "Warehouses in {port} reported fewer arrivals of beans than a year earlier.",
        "The weather service forecast rain for {coffee_region} late next week, which could help the "
        "flowering.",
        "Farmers said fertiliser prices had doubled in two years, squeezing margins even at current prices.",
        "{coffee_country}'s agriculture ministry will publish its first estimate of the next harvest in "
        "{month}.",
        "Demand for coffee has held up despite higher prices in shops, importers said.",
    ),
    term_sentences=(
        "Prices of robusta, the variety used in instant blends, {rose} to {robusta_price} in London.",
        "Roasters in Europe and North America have cut their cover to a few weeks of supply, dealers said.",
        "Large roasters said they would pass part of the cost on to consumers from {month}.",
        "Exporters said farmers were selling coffee beans only in small lots, waiting for better prices.",
        "Some producers have called for a return to an ICO quota system to steady prices, an idea importers "
        "reject.",
        "{coffee_country} is expected to harvest {bags} of robusta this season.",
    ),
    passing=(
        "Delegates broke for coffee before the final vote, which was held late in the evening.",
        "The company also plans to open a coffee bar in the lobby of its new offices in {city}.",
        "Over coffee with reporters afterwards, {person2} declined to comment on the timetable.",
        "Staff were offered free coffee and pastries while the systems were restored.",
    ),
    false_headlines=(
        ("retail", "Espresso machine maker recalls {thousands} appliances over faulty valve",
         "{company} is recalling {thousands} home espresso machines sold in {country} because a faulty valve "
         "can leak hot water, it said on {weekday}."),
        ("politics", "Ministers agree budget outline over coffee in late-night talks",
         "Ministers in {country} agreed the outline of next year's budget in talks that ran past midnight on "
         "{weekday}, officials said."),
        ("health", "Researchers find no link between coffee drinking and heart rhythm problems",
         "People who drink several cups of coffee a day are no more likely to develop an irregular heartbeat "
         "than those who drink none, according to a study of {thousands} adults."),
    ),
    false_sentences=(
        "Separately, the town's chestnut roasters returned to the market square for the winter season.",
        "Separately, the logistics start-up Robusta said it had raised {millions} from investors.",
    ),
)

COCOA_WRITING = TopicWriting(
    reader_words=("cocoa", "chocolate"),
    # Parallel tuples: angle i is (headlines[i] or plain_headlines[i], leads[i]).
    headlines=(
        "Cocoa prices {climb} on {cocoa_country} supply fears",
        "Chocolate makers brace for another year of expensive beans",
        "{cocoa_country} raises cocoa farm-gate price by {pct}",
        "{trader} trims cocoa surplus forecast",
        "Chocolate makers raise prices as cocoa costs soar",
        "Rains lift cocoa mid-crop hopes in {cocoa_country}",
    ),
    plain_headlines=(
        "Bean prices {climb} on West African supply fears",
        "Confectioners brace for another year of expensive beans",
        "{cocoa_country} raises farm-gate price for beans by {pct}",
        "{trader} trims forecast for this season's bean surplus",
        "Confectioners raise shelf prices as bean costs soar",
        "Rains in {cocoa_country} lift hopes for the mid-crop",
    ),
    leads=(
        "Cocoa futures {rose} {pct} in London on {weekday}, to {cocoa_price}, as arrivals at West African "
        "ports lagged last season's pace.",
        "Chocolate makers are facing another year of expensive cocoa after a poor harvest in West Africa, "
        "traders said on {weekday}.",
        "Cocoa farmers in {cocoa_country} will be paid more for their beans this season after the regulator "
        "raised the farm-gate price by {pct}.",
        "{trader} cut its forecast for the world cocoa surplus this season on {weekday}, citing disease and "
        "dry weather in West Africa.",
        "Several large chocolate makers will raise shelf prices in {country} from {month}, passing on the "
        "cost of cocoa, a retail trade group said.",
        "Heavy rains in {cocoa_country} have lifted hopes for the cocoa mid-crop, farmers and exporters said "
        "on {weekday}.",
    ),
    sentences=(
        "Arrivals at ports in {cocoa_country} reached {tonnes} by the end of {month}, {higher} than a year "
        "earlier, exporters said.",
        "{analyst}, an analyst at {trader}, said the mid-crop would decide whether the market ends the "
        "season in deficit.",
        "Farmers have complained about the cost of fertiliser and the spread of swollen shoot disease.",
        "Heavy rains in recent weeks have improved soil moisture but also raised the risk of black pod.",
        "Confectioners have shrunk bar sizes rather than raise shelf prices, a practice critics call "
        "shrinkflation.",
        "Demand in Europe and North America has held up despite higher retail prices.",
        "Dealers said quality was uneven, with many beans smaller than usual.",
        "Exporters said buyers were seeking beans for delivery in the first half of next year.",
        "The regulator in {cocoa_country} sells much of the harvest in advance through forward contracts.",
        "Smuggling of beans across borders has increased as prices diverged, officials said.",
        "Farmers say ageing trees and small plots make it hard to raise yields.",
        "Stocks in exchange warehouses have fallen to their lowest in years.",
    ),
    term_sentences=(
        "Grindings in Europe {rose} {pct} in the third quarter from a year earlier, the industry association "
        "said, a sign that demand is holding up.",
        "Asian grindings, a gauge of demand, came in {higher} than analysts had forecast.",
        "Traders expect the Ivory Coast crop to come in at around {tonnes}, {higher} than last season.",
        "Prices for cocoa butter, used in confectionery and cosmetics, have moved faster than the beans "
        "themselves.",
    ),
    passing=(
        "The bakery chain said it would add a hot cocoa to its winter menu.",
        "Shoppers bought more chocolate and flowers than usual before the holiday, the retailers' association "
        "said.",
        "Visitors were handed chocolate bars at the entrance, the organisers said.",
    ),
    false_headlines=(
        ("health", "Dark chocolate study finds no benefit for blood pressure",
         "Eating a little dark chocolate every day did not lower blood pressure in a trial of {thousands} "
         "adults, researchers said on {weekday}."),
        ("retail", "Chocolate shops report brisk holiday trade in {city}",
         "Independent sweet shops in {city} said on {weekday} that holiday trade had been the best in years."),
    ),
    false_sentences=(
        "Separately, {company2} launched a skin cream made with cocoa butter and shea.",
        "Separately, a cosmetics maker recalled a batch of lip balm containing cocoa butter after a labelling "
        "error.",
    ),
)

GOLD_WRITING = TopicWriting(
    reader_words=("gold", "bullion"),
    # Parallel tuples: angle i is (headlines[i] or plain_headlines[i], leads[i]).
    headlines=(
        "Gold {climbs} as investors weigh the rate outlook",
        "Central banks keep buying gold, industry group says",
        "Bullion demand in {country} {jumps} ahead of wedding season",
        "{miner} raises gold output forecast",
        "Gold prices {rise} for a third week",
        "Investors pull money from gold funds",
    ),
    plain_headlines=(
        "Precious metal {climbs} as investors weigh the rate outlook",
        "Central banks keep adding to reserves of the yellow metal",
        "Jewellery demand in {country} {jumps} ahead of wedding season",
        "{miner} raises output forecast after a strong quarter",
        "Precious metal heads for a third weekly {gain}",
        "Investors pull money from funds backed by the precious metal",
    ),
    leads=(
        "Gold {rose} {small_pct} to {gold_price} on {weekday} as investors weighed the outlook for interest "
        "rates.",
        "Central banks bought {gold_tonnes} of gold in the last quarter, an industry group said on {weekday}, "
        "extending a long run of purchases.",
        "Demand for gold jewellery and bars in {country} {rose} {pct} in the last quarter, an industry group "
        "said.",
        "{miner} said on {weekday} it expects to produce {ounces} of gold this year and will spend more on "
        "exploration.",
        "Spot gold traded near {gold_price} on {weekday}, {higher} on the week, as bullion dealers reported "
        "steady buying from central banks.",
        "Investors withdrew money from exchange-traded funds backed by gold for a third month in {month}, "
        "industry data showed.",
    ),
    sentences=(
        "The metal, which pays no interest, tends to gain when rates are expected to fall.",
        "{analyst}, a strategist at {trader}, said central bank purchases had put a floor under prices.",
        "Holdings of exchange-traded funds backed by the metal were little changed.",
        "Silver and platinum moved in the same direction, dealers said.",
        "Miners say costs per ounce have risen because of higher energy and labour prices.",
        "Physical buyers in Asia were reluctant to pay current prices, dealers said.",
        "Central banks bought more of the metal last year than in any year for a decade.",
        "Mining companies have struggled with rising costs despite high prices.",
        "Some investors buy the metal as a hedge against inflation and political risk.",
        "Swiss refiners said they were working extra shifts to meet demand for bars.",
        "Moves in the dollar remain a key driver, since the metal is priced in dollars.",
        "Jewellers said customers were buying lighter pieces because of high prices.",
    ),
    term_sentences=(
        "U.S. Comex gold futures for December delivery settled at {gold_price}.",
        "Prices are quoted per troy ounce, a unit of about 31.1 grams.",
        "The company's largest gold mine, in {country}, accounts for about a third of its output.",
        "A troy ounce now costs about twice what it did five years ago.",
    ),
    passing=(
        "Elsewhere in the markets, the dollar firmed and gold was little changed.",
        "The award, a gold-plated trophy, was presented by {person2}.",
        "The building's restored gold leaf ceiling will open to visitors in {month}.",
    ),
    false_headlines=(
        ("sports", "{athlete} takes gold in the {event} in {city}",
         "{athlete} won the {event} at the championships in {city} on {weekday}, a first title of the "
         "season."),
        ("sports", "{athlete} wins gold on home soil",
         "{athlete} won the {event} in front of a home crowd in {city} on {weekday}."),
        ("politics", "Minister defends 'gold standard' building rules",
         "{person} defended new building safety rules on {weekday}, calling them the strictest in the "
         "region."),
    ),
    false_sentences=(
        "Separately, the council voted to turn a disused gold mine near {city} into a museum.",
        "Separately, the mint said a commemorative silver coin weighing one troy ounce would go on sale in "
        "{month}.",
    ),
)

SHIPPING_WRITING = TopicWriting(
    reader_words=("shipping", "freight", "container", "ships"),
    # Parallel tuples: angle i is (headlines[i] or plain_headlines[i], leads[i]).
    headlines=(
        "Container freight rates {climb} on {route} routes",
        "Shipping lines avoid {canal} as insurers raise premiums",
        "{carrier} sees shipping demand {rising} into the holidays",
        "Freight costs {rise} for importers as capacity tightens",
        "Tanker rates {climb} as Gulf oil exports {rise}",
        "Dry bulk freight index {climbs} to {index_points}",
    ),
    plain_headlines=(
        "Container rates {climb} on {route} routes",
        "Container lines avoid {canal} as insurers raise premiums",
        "{carrier} sees box demand {rising} into the holidays",
        "Cost of moving a box from Asia to Europe {jumps}",
        "Rates for crude carriers {climb} as Gulf oil exports {rise}",
        "Bulk carrier rates {climb} on iron ore demand",
    ),
    leads=(
        "Container freight rates on {route} routes {rose} {pct} this week, according to a widely watched "
        "index.",
        "Shipping lines are routing more ships away from {canal} after insurers raised premiums, adding up to "
        "{days} days to some voyages.",
        "{carrier} said on {weekday} that bookings on its {route} container services had been {strong} "
        "since {month}.",
        "The cost of shipping a 40-foot container from Asia to Europe {rose} {pct} on the week, freight "
        "brokers said.",
        "Rates for ships carrying crude oil from the Gulf to Asia {rose} {pct} this week as exports "
        "increased, brokers said.",
        "An index of rates for ships carrying iron ore, coal and grain {rose} to {index_points} on "
        "{weekday}, brokers said.",
    ),
    sentences=(
        "Carriers have added capacity by ordering new ships, but many will not be delivered until next year.",
        "{analyst}, an analyst at a maritime consultancy, said rates would stay {higher} while the detours "
        "lasted.",
        "Some {boxes} containers were waiting to be loaded at {port}, the port authority said.",
        "Importers in Europe said they had brought forward orders to avoid holiday delays.",
        "Charter rates for mid-sized container ships have doubled since {month}.",
        "Insurers have raised premiums for voyages through the region, adding to costs.",
        "Fuel accounts for a large share of a carrier's operating costs.",
        "Some carriers have added surcharges to cover higher insurance costs.",
        "Owners have ordered record numbers of new container ships, which could push rates down later.",
        "Exporters in Asia said they were struggling to find space on ships.",
        "Detours around conflict zones also add to fuel use and emissions, environmental groups say.",
        "Demand for iron ore from steel mills in Asia has been steady, brokers said.",
    ),
    term_sentences=(
        "Port congestion at {port} has left ships waiting up to {days} days for a berth.",
        "Dockers at {port} plan a {days}-day strike over pay, their union said.",
        "The vessel, carrying {boxes} containers, was expected to dock at {port2} next week.",
        "Each vessel diverted adds fuel costs and ties up capacity, analysts said.",
    ),
    passing=(
        "The retailer said it would keep free shipping on orders over $50.",
        "Parts arrived late because of a shipping delay, the company said.",
    ),
    false_headlines=(
        ("retail", "{company} drops free shipping on small online orders",
         "{company} will start charging for delivery on online orders below $30 from {month}, it said on "
         "{weekday}."),
        ("transport", "Freight train derails near {city}; no injuries reported",
         "Several wagons of a goods train came off the tracks near {city} on {weekday}, blocking the main "
         "line for hours."),
    ),
    false_sentences=(
        "Separately, surgeons at {hospital} reported a new technique to repair a damaged blood vessel.",
        "Separately, a restored Viking vessel went on display at the city museum.",
    ),
)

DEFAULT_TOPICS: tuple[PlantedTopic, ...] = (
    PlantedTopic("coffee", 0.01, ("coffee", "arabica", "espresso"), ("coffee beans", "robusta", "roasters", "ico quota"),
                 writing=COFFEE_WRITING),
    PlantedTopic("cocoa", 0.005, ("cocoa", "chocolate"), ("cocoa butter", "grindings", "ivory coast crop"),
                 writing=COCOA_WRITING),
    PlantedTopic("gold", 0.02, ("gold", "bullion"), ("troy ounce", "gold mine", "comex gold"), writing=GOLD_WRITING),
    PlantedTopic("shipping", 0.015, ("shipping", "freight", "tanker"), ("port congestion", "dockers", "vessel"),
                 writing=SHIPPING_WRITING),
)


# --- stories of no planted topic, by beat ------------------------------------------------------------


@dataclass(frozen=True)
class Beat:
    stories: tuple[tuple[str, str], ...]  # (headline, lead sentence) that belong together
    sentences: tuple[str, ...]  # background that fits any story of the beat, in any order


BEATS: dict[str, Beat] = {
    "business": Beat(
        stories=(
            ("{company} profit {beats} forecasts as costs ease",
             "{company} reported quarterly net profit of {millions} on {weekday}, {higher} than analysts had "
             "expected, as raw material costs eased."),
            ("{company} shares {jumps} after quarterly results",
             "Shares of {company} {rose} {pct2} on {weekday} after the company reported quarterly revenue of "
             "{billions}."),
            ("{company} to cut {jobs} jobs in restructuring",
             "{company} said on {weekday} it would cut about {jobs} jobs, mostly in administration, as part of "
             "a plan to save {millions} a year."),
            ("{company} agrees {billions} takeover of {company2}",
             "{company} has agreed to buy {company2} for {billions} in cash, the two companies said on "
             "{weekday}."),
            ("{company} names {person} as chief executive",
             "{company} has named {person}, a former executive at {company2}, as its next chief executive, "
             "starting in {month}."),
        ),
        sentences=(
            "Revenue {rose} {pct} to {billions}, helped by price increases and steady demand.",
            "Chief executive {person} said the company would keep investing despite a cautious outlook.",
            "Analysts had expected a result close to last year's, according to a poll of brokers.",
            "The board proposed a dividend unchanged from last year.",
            "{company2}, a rival, is due to report its results next week.",
            "The company's shares have {rose} {pct} since the start of the year.",
            "Unions said they would seek talks with management on {weekday}.",
            "The group employs about {thousands} people in {country} and abroad.",
        ),
    ),
    "economy": Beat(
        stories=(
            ("Central bank of {country} holds rates at {rate}",
             "The central bank of {country} kept its main interest rate at {rate} on {weekday}, as most "
             "economists had expected."),
            ("{country} inflation {rise}s to {pct} in {month}",
             "Consumer prices in {country} {rose} to an annual rate of {pct} in {month}, the statistics office "
             "said on {weekday}."),
            ("{country} economy grows faster than expected",
             "The economy of {country} grew {small_pct} in the last quarter, faster than expected, driven by "
             "household spending."),
            ("{country} finance minister promises tighter budget",
             "Finance minister {person2} of {country} said on {weekday} that the budget deficit would narrow "
             "next year."),
        ),
        sentences=(
            "Governor {person} said policy would stay {tighter} until inflation was clearly under control.",
            "Economists polled before the decision had been split on the outcome.",
            "The currency {rose} {small_pct} against the dollar after the announcement.",
            "Wage growth remains strong, which worries some members of the rate-setting committee.",
            "The next rate decision is due in {month}.",
            "Government bond yields were little changed.",
            "Business surveys point to slower growth in the second half of the year.",
            "The opposition said households were still struggling with the cost of living.",
        ),
    ),
    "politics": Beat(
        stories=(
            ("{party} wins most seats in {country} regional vote",
             "{party} won the largest share of the vote in regional elections in {country} on {weekday}, "
             "official results showed."),
            ("{country} parliament passes pension reform",
             "The parliament of {country} passed a pension reform on {weekday} that raises the retirement age "
             "in stages."),
            ("Opposition calls for inquiry into {city} contracts",
             "Opposition lawmakers called on {weekday} for an independent inquiry into contracts awarded by the "
             "city of {city}."),
            ("{person} resigns as minister after expenses row",
             "{person} resigned as a minister on {weekday} after weeks of questions about expense claims."),
            ("Coalition talks in {country} enter third week",
             "Talks on forming a coalition government in {country} entered their third week on {weekday} with "
             "no deal in sight."),
        ),
        sentences=(
            "Turnout was {pct} lower than at the last election, officials said.",
            "Opposition leader {person2} called it a warning to the government.",
            "Thousands of people marched through {city} to protest against the plans.",
            "The minister denied wrongdoing but said the row had become a distraction.",
            "An independent report is due in {month}.",
            "Opinion polls show voters are divided on the issue.",
            "The vote in parliament was closer than the government had hoped.",
            "Party officials said the leadership would meet on {weekday} to discuss the result.",
        ),
    ),
    "technology": Beat(
        stories=(
            ("{company} unveils new {product}",
             "{company} unveiled its new {product} at an event in {city} on {weekday}, saying it would go on "
             "sale in {month}."),
            ("{company} fined over data breach",
             "The data protection authority of {country} fined {company} {millions} on {weekday} over a breach "
             "that exposed customer records."),
            ("Regulators in {country} open inquiry into {company} app store",
             "Competition regulators in {country} said on {weekday} they had opened an inquiry into the fees "
             "{company} charges app developers."),
            ("{company} to build data centre near {city}",
             "{company} plans to build a data centre near {city} that will employ about {jobs} people once it "
             "opens, the company said."),
            ("Outage hits {company} customers for {days} hours",
             "Customers of {company} were unable to use its services for {days} hours on {weekday} after a "
             "software update failed."),
        ),
        sentences=(
            "{person}, who leads the project, said demand had been {strong} in early tests.",
            "Critics said the company had been slow to explain what had happened.",
            "Analysts said the move was important for the company's efforts to win back market share.",
            "Services were restored by late afternoon, the company said.",
            "Rival {company2} launched a similar service last year.",
            "The company said it would appeal against the decision.",
            "Shares of {company} {rose} {small_pct} in afternoon trading.",
            "Consumer groups welcomed the decision.",
        ),
    ),
    "sports": Beat(
        stories=(
            ("{team} beat {team2} {score} to go top",
             "{team} beat {team2} {score} on {weekday}, with the winner coming in the {minutes}th minute."),
            ("{team} sack coach after poor run",
             "{team} parted company with their coach on {weekday} after one win in {days} league games."),
            ("{athlete} sets national record in the {event}",
             "{athlete} broke the national record in the {event} at the meeting in {city} on {weekday}."),
            ("{team} sign striker from {city}",
             "{team} have signed a striker from a club in {city} on a three-year contract, the club said on "
             "{weekday}."),
            ("Late goal sends {team} into the cup final",
             "A goal in the {minutes}th minute sent {team} into the cup final at the expense of {team2} on "
             "{weekday}."),
        ),
        sentences=(
            "Coach {person} said his side had deserved it after a difficult first half.",
            "The result leaves {team} with {days} games left to play this season.",
            "Around {thousands} fans watched at the club's home ground.",
            "The two sides meet again in the league in {month}.",
            "Injuries to two defenders left the visitors short of options.",
            "The club's chairman, {person2}, thanked supporters for their patience.",
            "The national federation said it would review the schedule for next season.",
            "Tickets for the next home game sold out within hours.",
        ),
    ),
    "weather": Beat(
        stories=(
            ("Heatwave grips {country} as temperatures reach {temperature} degrees",
             "Temperatures reached {temperature} degrees Celsius in parts of {country} on {weekday}, the "
             "weather service said."),
            ("Floods force thousands from homes near {city}",
             "Heavy rain brought {millimetres} millimetres in two days to the region around {city}, forcing "
             "thousands of people from their homes."),
            ("Storm cuts power to homes across {country}",
             "A storm with winds of more than 100 km/h cut power to homes across {country} overnight, the "
             "grid operator said."),
            ("Wildfire near {city} under control, officials say",
             "Firefighters brought a wildfire near {city} under control on {weekday}, helped by cooler weather "
             "and lighter winds."),
        ),
        sentences=(
            "About {thousands} people were moved to temporary shelters, the authorities said.",
            "Power was restored to most homes by the evening.",
            "Schools in the worst-hit districts will stay closed until {weekday}.",
            "{person}, the regional governor, said emergency funds had been released.",
            "Forecasters expect more unsettled weather over the coming week.",
            "Roads in several districts remained closed.",
            "Insurers said it was too early to estimate the cost of the damage.",
            "Scientists say such extremes are becoming more frequent.",
        ),
    ),
    "health": Beat(
        stories=(
            ("New {product} approved for use in {country}",
             "Regulators in {country} approved a new {product} on {weekday} after a trial of {thousands} "
             "patients."),
            ("Hospital waiting lists in {country} grow again",
             "The number of people waiting for planned hospital treatment in {country} {rose} {pct} in "
             "{month}, official figures showed."),
            ("Study finds walking cuts risk of heart disease",
             "Adults who walk briskly for half an hour a day are less likely to develop heart disease, "
             "according to a study of {thousands} people."),
            ("{hospital} opens new cancer wing",
             "{hospital} opened a new cancer wing on {weekday} that will treat about {jobs} patients a year."),
        ),
        sentences=(
            "{person}, a doctor at {hospital}, said the findings should encourage patients to stay active.",
            "Patient groups welcomed the decision but said treatment must be affordable.",
            "The health ministry said it would publish a plan to cut waiting times in {month}.",
            "The researchers said more work was needed to confirm the results.",
            "Nurses' unions said staff shortages were the main cause of delays.",
            "The study was published in a medical journal on {weekday}.",
            "Doctors said the change would make a difference for patients in rural areas.",
            "Funding for the project came partly from a charity.",
        ),
    ),
    "energy": Beat(
        stories=(
            ("Oil prices {climb} as producers keep output curbs",
             "Brent crude {rose} {pct} on {weekday} after producers said they would keep output curbs in "
             "place."),
            ("{company} approves new offshore wind farm",
             "{company} said on {weekday} it would invest {billions} in a wind farm off the coast of "
             "{country}."),
            ("Power prices in {country} {jumps} in cold snap",
             "Wholesale power prices in {country} {rose} {pct2} on {weekday} as a cold snap increased demand "
             "for heating."),
            ("{company} to close coal plant near {city}",
             "{company} will close its coal-fired power plant near {city} by the end of the year, affecting "
             "about {jobs} workers."),
        ),
        sentences=(
            "Analysts at {company2} said supply would remain tight through {month}.",
            "The government wants renewables to supply most of the country's electricity within a decade.",
            "Gas storage levels are above the seasonal average, the grid operator said.",
            "Refinery outages have also supported prices, traders said.",
            "Environmental groups welcomed the plan but said it should have come sooner.",
            "The project still needs a grid connection, which could take years.",
            "Energy bills have become a political issue ahead of next year's election.",
            "{person}, the energy minister, said supplies were secure for the winter.",
        ),
    ),
    "agriculture": Beat(
        stories=(
            ("Wheat prices {climb} as dry weather hits {country} harvest",
             "Wheat futures {rose} {pct} in Chicago on {weekday} on worries about dry weather in {country}."),
            ("{country} raises corn harvest forecast",
             "The agriculture ministry of {country} raised its forecast for this year's corn harvest by "
             "{pct2} on {weekday}."),
            ("Farmers in {country} protest against import rules",
             "Hundreds of tractors blocked roads into {city} on {weekday} as farmers protested against cheaper "
             "imports."),
            ("Soybean exports from {country} {rise} in {month}",
             "Soybean exports from {country} {rose} to {tonnes} in {month}, the farm ministry said."),
        ),
        sentences=(
            "{person}, who farms near {city}, said fertiliser costs had eaten into margins.",
            "Rain forecast for next week could help late-planted fields, meteorologists said.",
            "Grain traders said demand from feed makers had been steady.",
            "The farmers' union said protests would continue until the rules were changed.",
            "Storage space is running short in some regions, cooperatives said.",
            "The government promised to review support payments in {month}.",
            "Buyers in North Africa and Asia have been active in recent weeks.",
            "Yields vary widely between regions, the ministry said.",
        ),
    ),
    "property": Beat(
        stories=(
            ("House prices in {country} {rise} for a fifth month",
             "Average house prices in {country} {rose} {small_pct} in {month}, a lenders' survey showed on "
             "{weekday}."),
            ("{company} plans {jobs} new homes near {city}",
             "{company} said on {weekday} it would build {jobs} homes on a former industrial site near "
             "{city}."),
            ("Mortgage approvals in {country} {climb}",
             "Mortgage approvals in {country} {rose} {pct} from the previous month, central bank data showed on "
             "{weekday}."),
            ("Office vacancies in {city} reach record",
             "About {pct2} of office space in {city} is now empty, the highest share on record, a property "
             "consultancy said."),
        ),
        sentences=(
            "Buyers have been helped by a fall in mortgage rates since the spring.",
            "{person}, an economist at {company2}, said the market was likely to cool next year.",
            "Builders have complained about the time it takes to get planning permission.",
            "Rents have risen faster than wages in most large cities.",
            "First-time buyers make up a growing share of sales.",
            "Local residents have raised concerns about traffic and school places.",
            "Landlords are converting some offices into flats.",
            "The survey covers about {thousands} transactions a month.",
        ),
    ),
    "transport": Beat(
        stories=(
            ("{company} orders new jets for short-haul routes",
             "{company} ordered new aircraft worth {billions} at list prices, it said on {weekday}."),
            ("Rail strike in {country} disrupts commuters",
             "Rail workers in {country} walked out for {days} days from {weekday} in a dispute over pay and "
             "staffing."),
            ("{city} opens new tram line",
             "A new tram line linking the centre of {city} with its eastern suburbs opened on {weekday}."),
            ("Airport in {city} reports record passenger numbers",
             "Passenger numbers at the airport in {city} {rose} {pct} in {month} from a year earlier, to a "
             "record."),
        ),
        sentences=(
            "Commuters faced long queues for replacement buses.",
            "{person}, the transport minister, urged both sides to return to talks.",
            "The first of the new aircraft are due to arrive next year.",
            "The project ran over budget and opened two years late.",
            "Ticket prices will stay unchanged until the end of the year, the operator said.",
            "Local businesses hope the link will bring more visitors.",
            "The airport plans to add a second runway by the end of the decade.",
            "Unions said staff were working longer hours to cover vacancies.",
        ),
    ),
    "retail": Beat(
        stories=(
            ("{company} sales {rise} as shoppers return",
             "{company} said on {weekday} that like-for-like sales {rose} {pct} in the {days} weeks to the end "
             "of {month}."),
            ("Retail sales in {country} {climb} in {month}",
             "Retail sales in {country} {rose} {small_pct} in {month}, the statistics office said on "
             "{weekday}."),
            ("{company} to close {days} stores",
             "{company} will close {days} stores where leases are due to expire, affecting about {jobs} "
             "staff, it said on {weekday}."),
            ("Online sales lift {company} results",
             "Online orders now account for about a third of sales at {company}, which reported a {gain} of "
             "{millions} on {weekday}."),
        ),
        sentences=(
            "Chief executive {person} said shoppers remained careful with their spending.",
            "Discount chains have gained market share over the past year.",
            "Shares in {company} {rose} {pct2} after the update.",
            "The group said it expected a busy holiday season.",
            "Clothing and electronics sold better than groceries.",
            "Footfall in city centres is still below where it was five years ago.",
            "The company said it would invest in its website and delivery service.",
            "Consumer confidence improved slightly in {month}, a survey showed.",
        ),
    ),
    "courts": Beat(
        stories=(
            ("Court upholds fine against {company}",
             "A court in {city} upheld a fine of {millions} against {company} on {weekday}."),
            ("Former {company} executive goes on trial in {city}",
             "A former executive of {company} went on trial in {city} on {weekday}, accused of misleading "
             "investors about the company's finances."),
            ("Judge blocks {country} road project",
             "A judge in {country} blocked a motorway project on {weekday}, ruling that its environmental "
             "assessment had been inadequate."),
            ("{company} settles lawsuit over faulty {product}",
             "{company} will pay {millions} to settle a lawsuit over a faulty {product}, without admitting "
             "liability."),
        ),
        sentences=(
            "{person}, a lawyer for the defendants, said they would appeal.",
            "The trial is expected to last until {month}.",
            "Campaigners who brought the case welcomed the ruling.",
            "The company said it had cooperated fully with the investigation.",
            "The ruling can be appealed to the supreme court.",
            "Prosecutors declined to comment after the hearing.",
            "The case has been closely watched by other companies in the sector.",
            "A hearing on damages is scheduled for {month}.",
        ),
    ),
}


# --- composing stories ---------------------------------------------------------------------------


def _paragraphs(sentences: list[str]) -> str:
    """Two or three paragraphs of about two sentences, separated by a blank line."""
    return "\n\n".join(" ".join(sentences[i : i + 2]) for i in range(0, len(sentences), 2))


def _topic_sentences(
    rng: random.Random, writing: TopicWriting, *, angle: int, more: int, body_term: bool
) -> list[str]:
    sentences = [writing.leads[angle], *rng.sample(writing.sentences, more)]
    if body_term:
        sentences.insert(rng.randint(1, len(sentences)), rng.choice(writing.term_sentences))
    return sentences


def _writing(topic: PlantedTopic) -> TopicWriting:
    if topic.writing is None:
        raise ValueError(f"planted topic {topic.name!r} has no templates (PlantedTopic.writing)")
    return topic.writing


def _story(rng: random.Random, topics: Sequence[PlantedTopic]) -> tuple[str, str, list[str]]:
    """(headline, body, planted topic names) of one story."""
    cast = _Cast(rng)
    planted = [t for t in topics if rng.random() < t.prevalence]
    if planted:
        headlines: list[str] = []
        parts: list[str] = []
        for position, topic in enumerate(planted):
            writing = _writing(topic)
            # The two views of a topic are drawn independently: the demo's pair relies on it.
            title_term = rng.random() < topic.title_rate
            body_term = rng.random() < topic.body_rate
            angle = rng.randrange(len(writing.leads))
            headlines.append((writing.headlines if title_term else writing.plain_headlines)[angle])
            sentences = _topic_sentences(
                rng, writing, angle=angle, more=rng.randint(4, 5) if position == 0 else 2, body_term=body_term
            )
            parts.append(_paragraphs(sentences))
        title = "; ".join(headlines)
        body = "\n\n".join(parts)
        return title.format_map(cast), body.format_map(cast), [t.name for t in planted]
    # A story of no planted topic, perhaps with near misses.
    false_headlines = [
        pair for t in topics if rng.random() < t.noise_rate for pair in [rng.choice(_writing(t).false_headlines)]
    ]
    if false_headlines:
        beat_name, title, lead = false_headlines[0]
        beat = BEATS[beat_name]
    else:
        beat = BEATS[rng.choice(_BEAT_NAMES)]
        title, lead = rng.choice(beat.stories)
    sentences = [lead, *rng.sample(beat.sentences, rng.randint(5, 7))]
    for topic in topics:
        writing = _writing(topic)
        if rng.random() < topic.noise_rate:
            sentences.insert(rng.randint(1, len(sentences)), rng.choice(writing.false_sentences))
        if rng.random() < topic.passing_rate:
            sentences.insert(rng.randint(1, len(sentences)), rng.choice(writing.passing))
    return title.format_map(cast), _paragraphs(sentences).format_map(cast), []


_BEAT_NAMES = tuple(sorted(BEATS))


def demo_corpus_records(
    *, documents: int, seed: int, topics: Sequence[PlantedTopic] = DEFAULT_TOPICS
) -> Iterator[dict]:
    """Yield `documents` records {id, title, body, topics, date}, deterministic in `seed`."""
    rng = random.Random(seed)
    start = date(2025, 1, 1)
    for index in range(documents):
        title, body, planted = _story(rng, topics)
        yield {
            "id": f"d{index + 1:07d}",
            "title": title[0].upper() + title[1:],
            "body": body,
            "topics": planted,
            "date": (start + timedelta(days=rng.randrange(365))).isoformat(),
        }


def demo_corpus_write(
    *, path: Path, documents: int, seed: int, topics: Sequence[PlantedTopic] = DEFAULT_TOPICS
) -> Path:
    """Write the records as JSON lines, gzipped when the name ends in .gz; returns the path."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".partial")
    opener = gzip.open if path.name.endswith(".gz") else open
    with opener(tmp, "wt", encoding="utf-8") as out:
        for record in demo_corpus_records(documents=documents, seed=seed, topics=topics):
            out.write(json.dumps(record, ensure_ascii=False))
            out.write("\n")
    tmp.replace(path)
    return path
