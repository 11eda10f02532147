"""Common English words the region parser never fuzzy-matches onto a body part.

A one-letter typo of a body word is often itself an English word ("but" ~ butt, "had" ~ head,
"should" ~ shoulder, "fee" ~ feet, "wait" ~ waist, "heal" ~ heel, "tow" ~ toe). A word in this
list is read as the word it is, never as a misspelt region (docs/decisions.md, "Impact").
"""
from __future__ import annotations

COMMON_WORDS: frozenset[str] = frozenset("""
a about above across act add after again against ago ahead aid aim air all allow almost alone
along already also although always am among an and angle another answer any anyone anything are
area around as ask asked at away bad bag ball bank bar base be beat became because become been
before began begin behind being below beneath best better between beyond big bit blow body bold
bolt book both box boy brought but buy by call came can cannot car care case cause certain
chair chance change check cheap cheat chess chip choose clear close cold come could count course
cut dark day dead deal dear deed deep did die do does dog done door down draw during each early
east eat edge effect egg else end enough even ever every everything except eye fact fail fair
fall far fast fat fear fee feed feel feels feet felt few field fill find fine fire first fit
five flat flew floor fly food foot for force form forth four free from front full fun game gave
get give go going gone good got great ground group grow had hair half hall hand hang happen hard
has hat have he head heal healed health hear heard heart heat heavy held help her here hers high
him hint hip his hit hold home hope hot hour how however i if in inch into is it item its just
keep kept kick kid kind knew know land last late later lay lead lean least led leg less let lie
life lift light like line lip list little live long look lose lost lot love low made main make
man many map may me mean meet men met might mind mine miss more most mouth move much must my
near neat need neither net never new next nice nine no nod none nor not note nothing now of off
oft often oh ok okay old on once one only onto open or other our out over own part pass past
pat path peak pet pick place plan play point pole pose post pull push put rain ran rate rather
reach read real rest rich ride right ring rise road rock role roll room rose round row rule run
said same sat saw say scene see seem seen self send sent set shall she shin shine ship shoe shot
should show shut side sight sign since sit six size skin sky slow so sole some soon sort soul
sound south spot stand start stay step still stop such sure take taken tall tell ten than that
the their them then there these they thing think this those though three through throw thus
tie till time to toe told too took top torn touch tow toward town tree true try turn two under
until up upon us use very view wait walk wall want war warm was watch water way we wear week
well went were west what when where which while white who whole why wide will wind wish with
within without word work would wrap yes yet you young your
""".split())
