//! Coverage accounting (F26): every word of a question is used by a plan piece, a known
//! filler, or *unexplained*. Nothing is dropped without a trace: an unexplained content
//! word becomes an `unknown_word` ambiguity (asked, or answered as an "ignored: …"
//! assumption), and a question where most content was not understood is refused with help.
//!
//! Pure. A token is explained when it lies inside something a later stage reads (a linked
//! mention, a time expression, a time grain, a comparison, an intent cue, an ambiguity's
//! words) or is a known word: English function words, and the words the reading steps
//! recognise by their text ("filter", "latest", "ever", "per" …).

use std::collections::HashSet;
use std::sync::OnceLock;

use super::TextSpan;
use super::reading::{Ctx, Reading};
use super::tokenize::{Token, TokenKind};
use super::vocab::is_common_word;

/// A run of unexplained words.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Unexplained {
    /// First token.
    pub first: usize,
    /// One past the last token.
    pub last: usize,
    /// Bytes of the question.
    pub span: TextSpan,
    /// The words as typed.
    pub text: String,
}

/// What the question's words did.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct Coverage {
    /// Per token: used by a piece, a cue or a known word.
    pub explained: Vec<bool>,
    /// Runs of unexplained content words, in question order.
    pub unexplained: Vec<Unexplained>,
    /// Content words (not fillers) in the question.
    pub content: usize,
    /// Content words something in the reading used.
    pub content_used: usize,
    /// Of those, names nothing in the data knows ("World Cup"): asked about, not
    /// understood.
    pub unknown_names: usize,
}

impl Coverage {
    /// Too little was understood to answer: nothing but unexplained words, or more
    /// unexplained content words (at least three) than understood ones.
    pub fn too_little(&self) -> bool {
        let names = self.unknown_names.min(self.content_used);
        let unexplained = self.content - self.content_used + names;
        let used = self.content_used - names;
        (unexplained >= 2 && used == 0) || (unexplained >= 3 && unexplained > used)
    }
}

/// Words every question may carry without meaning anything for the plan, and the words
/// the reading steps recognise by their text.
pub(crate) fn is_known_word(word: &str) -> bool {
    static KNOWN: OnceLock<HashSet<&'static str>> = OnceLock::new();
    KNOWN
        .get_or_init(|| {
            RECORDING_WORDS
                .split_whitespace()
                .chain(PERSON_WORDS.split_whitespace())
                .chain(KNOWN_WORDS.split_whitespace())
                .collect()
        })
        .contains(word)
        || is_common_word(word)
        || is_contraction(word)
}

/// "who've", "they'd", "it'll", "someone's" (the tokenizer joins a contraction: "whove"):
/// a pronoun with a contracted verb says nothing more than the pronoun.
fn is_contraction(word: &str) -> bool {
    const PRONOUNS: &str = "who they we you i it he she that there what which";
    ["ve", "d", "ll", "re", "s", "m"].iter().any(|end| {
        word.strip_suffix(end).is_some_and(|stem| {
            PRONOUNS
                .split_whitespace()
                .chain(PERSON_WORDS.split_whitespace())
                .any(|p| p == stem)
        })
    })
}

/// Indefinite pronouns for a person ("by someone who isn't a wound nurse", "anyone
/// seen twice"): the record the sentence is about, said without a noun.
const PERSON_WORDS: &str = "someone somebody anyone anybody everyone everybody whoever";

/// A verb of recording or marking ("recorded", "flagged").
pub(crate) fn is_recording_word(word: &str) -> bool {
    RECORDING_WORDS.split_whitespace().any(|w| w == word)
}

/// Verbs of recording and marking ("recorded", "flagged as"): they say nothing the plan
/// does not already say.
const RECORDING_WORDS: &str = "
recorded documented noted logged measured performed conducted entered captured taken
registered charted did carried undertaken completed found observed identified detected
present showing showed shown noticed marked flagged listed coded labelled labeled
classed classified known scored rated reported described stated gave given
recording documenting noting logging measuring charting reporting
";

/// Function words, politeness, and the words the reading steps recognise by their text
/// ("filter", "latest", "ever", "per", month names, number words …).
const KNOWN_WORDS: &str = "
regardless peak chronological chronologically irrespective whatever whichever matter descending ascending desc asc
belong belongs belonged belonging owned using based arithmetic clinically clinical formally officially confirmed took take takes taking work works working worked located treating occur occurs occurred occurring happen happens happened
homes home facility facilities centre centres center centers unit units body site sites
theyre thats theres whos were weve youre its itll
redo rerun repeat repeated redone
carry carried carrying out use uses used employ employs employed staff staffed single
yet so-far thus far
system systems database db file computed calculated counted tallied
main mainly primary primarily predominant predominantly dominant principal chiefly mostly
looked cared managed handled treat treats
widen widened broaden broadened expand expanded extend extended whole entire everywhere
side alphabetically alphabetical arranged reached reach reaches reaching attained cm2 mm2 diagnosed different distinct separate
a about above abscess across activity actually after again against age aged aggregate
all almost also altogether am amount an and annual annually any approximately apr april
are area arent around as assess assessed assessment assessments assmnt assmnts assmt
assmts at aug august average averages avg back baseline basically be became been before
being below better between beyond big bigger biggest bmi both bottom break breakdown
broken busiest but by called can case caseload cases centimeter centimeters centimetre
centimetres change changed changes changing classed classified climbed climbing clinic
clinicians clinics close closed cm cms cmsq coded combined compare compared comparing
comparison condition could count counts criterion current currently cut cutoff daily
dashboard data date day days dec december decrease decreased decreasing deeper deepest
depth detail details didnt differ difference differences display do does doesnt doing
don't done dont down dozen drop dropped dropping during each effect eight eighteen
eighty eleven ended entries entry equal equals even ever every evolution evolved exactly
exceeding except exclude excluded excluding expected fall fallen falling far feb
february fetch few fewer fewest fifteen fifty figures filter filters find first five
flagged foot for forty four fourteen fraction from gap get gets getting give gives go
going gone got great greater greatest grouped had hadnt has hasnt have havent having he
headcount heal healed healing heavier heaviest hello her here hers hey hi high higher
highest him his history how hundred hx i i'd i'm id identify if im impact in including
increase increased increasing info information injuries injury inside instead is isnt it
its jan january jul july jump jun june just kg kindly known labeled labelled large
larger largest last latest least less let lets level like limit list listed little long
longer longest look lookup low lower lowest many mar march marked max maximum may me
mean measurement median might millimeters millimetres min mine minimum mm mo month
monthly months more mos most mth mths much must my name named names nd nearly necrotic
need needed needs never new newest nine nineteen ninety no non non-healing none nor norm
normal not nov november now nr num number numbers oct october of often ok okay older
oldest on one ones only or order ordered other our ours out outcomes outside over
overall overdue overview past patient patients pats pct people per percent percentage pi
pis please pls plus plz point points preceding previous prior proportion provide pt pts
pull quantity quarter quarterly quarters quiet quietest range rank ranked ranking rate
rates rather ratio rd reading really recent record records report restrict restriction
retrieve review right rise risen rising roughly row rows same saw score see seen sep
sept september series seven seventeen seventy several shall shallower share she shes
short shorter should show since six sixteen sixty size small smaller smallest smoke
smoker so some sort sorted split sq square squared st standard statistics stats status
stuff such sum summary table tallies tally target tell ten th than thank thanks that the
their theirs them then there there's theres these they thing things thirteen thirty this
those three threshold through throughout till time tiniest to today together too top
total treat treated trend trending trends twelve twenty twenty-five two typical ulcer
ulcers under until up us usual value variation versus very view visit visited visits
volume vs want wanted was wasnt we we've week weekly weeks well went were werent weve
what what's whats when where which who who's whom whos whose why wider will with within
without wk wks worse would wounds wuonds year yearly years yesterday you you're younger
youngest your yr yrs ytd zero
";

/// Accounts for every token. `ranges` are token ranges something read (mentions, times,
/// grains, comparisons, cues); `spans` are byte spans of ambiguities and notes.
pub(crate) fn account(
    tokens: &[Token],
    ranges: &[(usize, usize)],
    spans: &[TextSpan],
    not_understood: &[(usize, usize)],
    question: &str,
) -> Coverage {
    let n = tokens.len();
    let misread = |k: usize| not_understood.iter().any(|&(a, b)| a <= k && k < b);
    let mut read = vec![false; n];
    for &(a, b) in ranges {
        for r in read.iter_mut().take(b.min(n)).skip(a) {
            *r = true;
        }
    }
    for (k, t) in tokens.iter().enumerate() {
        if spans.iter().any(|s| s.start < t.span.end && t.span.start < s.end) {
            read[k] = true;
        }
    }
    let mut explained = vec![true; n];
    let mut content = 0;
    let mut content_used = 0;
    for (k, t) in tokens.iter().enumerate() {
        let filler = match t.kind {
            // a known word the question used in a way nothing reads ("large clinics")
            TokenKind::Word if misread(k) => false,
            TokenKind::Word => {
                t.text.chars().count() < 2
                    || is_known_word(&t.text)
                    || is_apostrophe_part(tokens, k)
                    // "took place", "taking place": happened
                    || t.text == "place"
                        && k > 0
                        && matches!(
                            tokens[k - 1].text.as_str(),
                            "took" | "take" | "takes" | "taking" | "taken"
                        )
            }
            // "the two counts side by side", "both figures": how many figures, said of the
            // layout
            TokenKind::NumberWord
                if t.text == "two"
                    && k > 0
                    && tokens[k - 1].text == "the"
                    && tokens.get(k + 1).is_some_and(|n| {
                        matches!(
                            n.text.as_str(),
                            "counts" | "figures" | "numbers" | "totals" | "columns"
                        )
                    }) =>
            {
                true
            }
            // "at any one assessment", "a single one of them", "not one of which": "one"
            // as a pronoun
            TokenKind::NumberWord
                if t.text == "one"
                    && k > 0
                    && (matches!(
                        tokens[k - 1].text.as_str(),
                        "any" | "single" | "each" | "every" | "no"
                    ) || tokens[k - 1].text == "not"
                        && tokens.get(k + 1).is_some_and(|n| n.text == "of")) =>
            {
                true
            }
            TokenKind::Number | TokenKind::NumberWord | TokenKind::Date => false,
            TokenKind::Op | TokenKind::Punct => true,
        };
        if filler {
            if read[k] && matches!(t.kind, TokenKind::Word) && !is_common_word(&t.text) {
                // a recognised word inside a piece ("healed", "latest") is understood content
                content += 1;
                content_used += 1;
            }
            continue;
        }
        content += 1;
        if read[k] && !misread(k) {
            content_used += 1;
        } else {
            explained[k] = false;
        }
    }
    let mut unexplained = Vec::new();
    let mut k = 0;
    while k < n {
        if explained[k] {
            k += 1;
            continue;
        }
        let first = k;
        while k < n && (!explained[k] || is_joiner(tokens, k, &explained)) {
            k += 1;
        }
        let mut last = k;
        while last > first + 1 && explained[last - 1] {
            last -= 1;
        }
        let span = TextSpan::new(tokens[first].span.start, tokens[last - 1].span.end);
        unexplained.push(Unexplained {
            first,
            last,
            span,
            text: span.slice(question).to_owned(),
        });
    }
    // at most three questions: the fourth run on is one "and …" question with the third
    if unexplained.len() > 3 {
        let rest: Vec<Unexplained> = unexplained.split_off(2);
        let first = rest[0].first;
        let last = rest[rest.len() - 1].last;
        let text = rest
            .iter()
            .map(|u| u.text.as_str())
            .collect::<Vec<_>>()
            .join(", ");
        unexplained.push(Unexplained {
            first,
            last,
            span: TextSpan::new(rest[0].span.start, rest[rest.len() - 1].span.end),
            text,
        });
    }
    Coverage {
        explained,
        unexplained,
        content,
        content_used,
        unknown_names: 0,
    }
}

/// "pt's": the `s` after an apostrophe.
fn is_apostrophe_part(tokens: &[Token], k: usize) -> bool {
    k > 0
        && matches!(
            tokens[k].text.as_str(),
            "s" | "t" | "d" | "ll" | "re" | "ve" | "m"
        )
        && matches!(tokens[k - 1].text.as_str(), "'" | "’")
}

/// A filler between two unexplained words joins them into one phrase ("lots of drainage").
fn is_joiner(tokens: &[Token], k: usize, explained: &[bool]) -> bool {
    explained[k]
        && matches!(tokens[k].text.as_str(), "of" | "-" | "a" | "in")
        && k + 1 < tokens.len()
        && !explained[k + 1]
}

/// Accounts for the words of a read question: what the linker, the time reader, the
/// intent cues, the reading and the ambiguity detectors (`asked`: their spans) used.
pub(crate) fn of_question(ctx: &Ctx<'_>, r: &Reading, asked: &[TextSpan]) -> Coverage {
    let mut ranges: Vec<(usize, usize)> = Vec::new();
    ranges.extend(
        ctx.mentions
            .iter()
            .enumerate()
            .filter(|(mi, _)| !r.unused.contains(mi))
            .map(|(_, m)| (m.first, m.last)),
    );
    ranges.extend(ctx.times.iter().map(|t| (t.first, t.last)));
    ranges.extend(ctx.grains.iter().map(|g| (g.first, g.last)));
    ranges.extend(
        ctx.comparisons
            .iter()
            .filter(|c| !r.unread_comparisons.contains(&c.first))
            .map(|c| (c.first, c.last)),
    );
    let c = ctx.cues;
    let single = [c.count, c.list, c.weak_list, c.data_word, c.change_verb, c.who];
    ranges.extend(single.into_iter().flatten().map(|k| (k, k + 1)));
    ranges.extend(c.pronouns.iter().map(|&k| (k, k + 1)));
    // a negation with the second word of its exclusion ("leave out", "not counting")
    ranges.extend(c.negations.iter().map(|&k| {
        let pair = matches!(ctx.w(k + 1), "out" | "from" | "for" | "counting" | "including");
        (k, k + 1 + usize::from(pair))
    }));
    let pairs = [c.share, c.trend, c.compare];
    ranges.extend(pairs.into_iter().flatten());
    ranges.extend(c.agg.map(|(a, b, _)| (a, b)));
    ranges.extend(c.rank.map(|rc| (rc.first, rc.last)));
    ranges.extend(r.visit_hint_at);
    ranges.extend(r.consumed.iter().copied());
    ranges.extend(c.sort_instruction.map(|(a, b, _)| (a, b)));
    let mut spans: Vec<TextSpan> = Vec::new();
    spans.extend(asked.iter().copied());
    spans.extend(r.unknown_names.iter().copied());
    spans.extend(r.notes.iter().map(|(s, _)| *s));
    spans.extend(
        [r.entity_span, r.metric_span, r.unresolved_pronoun]
            .into_iter()
            .flatten(),
    );
    spans.extend(r.pieces.iter().filter_map(|p| p.span));
    if let Some(rank) = &r.rank {
        // "which 5 clinicians did the most": the number is the ranking's limit
        if let Some(n) = rank.n {
            ranges.extend(
                ctx.tokens
                    .iter()
                    .enumerate()
                    .filter(|(_, t)| t.num == Some(f64::from(n)))
                    .map(|(k, _)| (k, k + 1)),
            );
        }
    }
    let not_understood: Vec<(usize, usize)> = r
        .not_understood
        .iter()
        .map(|&mi| (ctx.mentions[mi].first, ctx.mentions[mi].last))
        .collect();
    let mut cov = account(ctx.tokens, &ranges, &spans, &not_understood, ctx.question);
    cov.unknown_names = r.unknown_names.len();
    cov
}

/// Things clinicians ask about that this data does not hold, by the words that name them.
/// A question about one of them is refused with a message that says what is not recorded,
/// instead of answering the rest of the question as if the word were not there.
const NOT_RECORDED: &[(&[&str], &str)] = &[
    (
        &["address", "addresses", "postcode", "postcodes", "zip", "zipcode"],
        "addresses",
    ),
    (
        &["phone", "phones", "telephone", "mobile number", "cell"],
        "phone numbers",
    ),
    (&["email", "emails", "e-mail"], "email addresses"),
    (
        &[
            "medication",
            "medications",
            "meds",
            "drug",
            "drugs",
            "prescription",
            "prescriptions",
            "antibiotic",
            "antibiotics",
            "insulin",
            "analgesic",
            "analgesia",
            "painkillers",
        ],
        "medications",
    ),
    (
        &[
            "dressing",
            "dressings",
            "bandage",
            "bandages",
            "foam",
            "alginate",
            "hydrocolloid",
        ],
        "dressings or products used",
    ),
    (
        &[
            "lab",
            "labs",
            "hba1c",
            "a1c",
            "glucose",
            "albumin",
            "creatinine",
            "hemoglobin",
            "haemoglobin",
            "crp",
            "wbc",
            "culture",
            "cultures",
            "swab",
            "swabs",
            "biopsy",
        ],
        "lab results",
    ),
    (
        &[
            "insurance",
            "insurer",
            "payer",
            "billing",
            "bill",
            "cost",
            "costs",
            "price",
            "reimbursement",
        ],
        "costs or insurance",
    ),
    (&["allergy", "allergies", "allergic"], "allergies"),
    (
        &["weight", "weigh", "height", "tall"],
        "weight or height (only BMI)",
    ),
    (
        &[
            "blood pressure",
            "pulse",
            "heart rate",
            "vitals",
            "vital signs",
            "oxygen",
        ],
        "vital signs",
    ),
    (
        &[
            "ethnicity",
            "ethnic",
            "race",
            "religion",
            "income",
            "occupation",
            "language",
        ],
        "that demographic detail",
    ),
    (
        &[
            "photo",
            "photos",
            "photograph",
            "photographs",
            "image",
            "images",
            "picture",
            "pictures",
        ],
        "wound photos",
    ),
    (&["note", "notes", "comment", "comments"], "free-text notes"),
];

/// What the question asks about that the data does not record, when a word (not part of
/// anything the model links) names one of [`NOT_RECORDED`].
pub(crate) fn not_recorded(tokens: &[Token], linked: &[(usize, usize)]) -> Option<&'static str> {
    let free = |k: usize| !linked.iter().any(|&(a, b)| a <= k && k < b);
    for (words, what) in NOT_RECORDED {
        for phrase in *words {
            let parts: Vec<&str> = phrase.split(' ').collect();
            let hit = tokens.windows(parts.len()).enumerate().any(|(k, w)| {
                w.iter().zip(&parts).all(|(t, p)| t.text == *p) && (k..k + parts.len()).all(free)
            });
            if hit {
                return Some(what);
            }
        }
    }
    None
}
