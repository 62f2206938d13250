//! Words from database names, for drafting labels and synonyms: splitting snake_case and
//! camelCase, expanding common abbreviations, naive singular and plural forms.
//!
//! Pure string work, no I/O. Deliberately naive: the output is a starting point that an
//! admin reviews, and a wrong guess costs one deleted line in the model file.

/// Splits an identifier into lowercase words: `book_loans`, `bookLoans`, `BookLoans`
/// and `BOOK_LOANS` all give `["book", "loans"]`; `ISBNCode` gives `["isbn", "code"]`.
/// Digits stay with the letters before them (`area_cm2` → `["area", "cm2"]`).
pub fn split_words(name: &str) -> Vec<String> {
    let mut words = Vec::new();
    for part in name
        .split(|c: char| !c.is_alphanumeric())
        .filter(|p| !p.is_empty())
    {
        let chars: Vec<char> = part.chars().collect();
        let mut current = String::new();
        for (i, &c) in chars.iter().enumerate() {
            let prev = i.checked_sub(1).map(|j| chars[j]);
            let next = chars.get(i + 1).copied();
            let boundary = c.is_uppercase()
                && match prev {
                    Some(p) if p.is_lowercase() || p.is_ascii_digit() => true,
                    Some(p) if p.is_uppercase() => next.is_some_and(char::is_lowercase),
                    _ => false,
                };
            if boundary && !current.is_empty() {
                words.push(std::mem::take(&mut current));
            }
            current.extend(c.to_lowercase());
        }
        if !current.is_empty() {
            words.push(current);
        }
    }
    words
}

/// The snake_case form of a name (`bookLoans` → `book_loans`); an identifier usable as a
/// model name. Empty when the name has no letters or digits.
pub fn snake_case(name: &str) -> String {
    let joined = split_words(name).join("_");
    match joined.chars().next() {
        Some(c) if c.is_ascii_digit() => format!("n_{joined}"),
        _ => joined,
    }
}

/// Common abbreviations in column and table names and what they stand for.
const ABBREVIATIONS: &[(&str, &str)] = &[
    ("acct", "account"),
    ("addr", "address"),
    ("adm", "admission"),
    ("amt", "amount"),
    ("avg", "average"),
    ("bmi", "body mass index"),
    ("bp", "blood pressure"),
    ("cat", "category"),
    ("cnt", "count"),
    ("ctry", "country"),
    ("cust", "customer"),
    ("dept", "department"),
    ("desc", "description"),
    ("dob", "date of birth"),
    ("dod", "date of death"),
    ("dt", "date"),
    ("dx", "diagnosis"),
    ("emp", "employee"),
    ("hx", "history"),
    ("info", "information"),
    ("loc", "location"),
    ("los", "length of stay"),
    ("max", "maximum"),
    ("mbr", "member"),
    ("mgr", "manager"),
    ("min", "minimum"),
    ("mrn", "medical record number"),
    ("nbr", "number"),
    ("no", "number"),
    ("num", "number"),
    ("org", "organization"),
    ("pct", "percent"),
    ("pt", "patient"),
    ("pts", "patients"),
    ("qty", "quantity"),
    ("ref", "reference"),
    ("rx", "prescription"),
    ("tel", "telephone"),
    ("temp", "temperature"),
    ("ts", "timestamp"),
    ("tx", "treatment"),
    ("txn", "transaction"),
    ("wk", "week"),
    ("wt", "weight"),
    ("yr", "year"),
    ("yrs", "years"),
];

/// The expansion of one abbreviated word, if it is a known abbreviation.
pub fn expand(word: &str) -> Option<&'static str> {
    ABBREVIATIONS
        .binary_search_by(|(a, _)| a.cmp(&word))
        .ok()
        .map(|i| ABBREVIATIONS[i].1)
}

/// The words with every known abbreviation expanded (`["pt", "dob"]` →
/// `["patient", "date", "of", "birth"]`).
pub fn expand_all(words: &[String]) -> Vec<String> {
    words
        .iter()
        .flat_map(|w| match expand(w) {
            Some(e) => e.split(' ').map(str::to_owned).collect(),
            None => vec![w.clone()],
        })
        .collect()
}

/// Naive singular of an English word (`clinics` → `clinic`, `categories` → `category`,
/// `boxes` → `box`); words that do not look plural are returned unchanged.
pub fn singular(word: &str) -> String {
    const KEEP: [&str; 8] = ["ss", "us", "is", "news", "series", "species", "status", "data"];
    if word.len() <= 3 || KEEP.iter().any(|k| word.ends_with(k)) {
        return word.to_owned();
    }
    if let Some(stem) = word.strip_suffix("ies") {
        return format!("{stem}y");
    }
    for suffix in ["sses", "xes", "ches", "shes", "zes"] {
        if word.ends_with(suffix) {
            return word[..word.len() - 2].to_owned();
        }
    }
    word.strip_suffix('s').unwrap_or(word).to_owned()
}

/// Naive plural of an English word (`clinic` → `clinics`, `category` → `categories`).
pub fn plural(word: &str) -> String {
    let vowel = |c: char| "aeiou".contains(c);
    if word.ends_with('s') && singular(word) != word {
        return word.to_owned();
    }
    if let Some(stem) = word.strip_suffix('y')
        && stem.chars().last().is_some_and(|c| !vowel(c))
    {
        return format!("{stem}ies");
    }
    if ["s", "x", "z", "ch", "sh"].iter().any(|s| word.ends_with(s)) {
        return format!("{word}es");
    }
    format!("{word}s")
}

/// The phrase with its last word made singular (`book loans` → `book loan`).
pub fn singular_phrase(words: &[String]) -> String {
    with_last(words, singular)
}

/// The phrase with its last word made plural (`book loan` → `book loans`).
pub fn plural_phrase(words: &[String]) -> String {
    with_last(words, plural)
}

fn with_last(words: &[String], f: fn(&str) -> String) -> String {
    match words.split_last() {
        Some((last, rest)) => {
            let mut v: Vec<String> = rest.to_vec();
            v.push(f(last));
            v.join(" ")
        }
        None => String::new(),
    }
}

/// `Sentence case` of a phrase: first letter upper case.
pub fn capitalize(phrase: &str) -> String {
    let mut chars = phrase.chars();
    match chars.next() {
        Some(c) => c.to_uppercase().chain(chars).collect(),
        None => String::new(),
    }
}

/// The unit code for a unit-like last word of a column name (`area_cm2` → `cm2`).
pub fn unit_of(word: &str) -> Option<&'static str> {
    Some(match word {
        "cm" => "cm",
        "cm2" => "cm2",
        "mm" => "mm",
        "mm2" => "mm2",
        "m" => "m",
        "km" => "km",
        "kg" => "kg",
        "g" => "g",
        "mg" => "mg",
        "ml" => "ml",
        "pct" | "percent" => "percent",
        "days" => "days",
        "hours" => "hours",
        "minutes" | "mins" => "minutes",
        "years" | "yrs" => "years",
        _ => return None,
    })
}

/// Whether a column name suggests a calendar date stored as text
/// (`birth_date`, `assessed_on`, `createdAt`, `dob`).
pub fn looks_like_date(words: &[String]) -> bool {
    match words {
        [] => false,
        [only] => matches!(only.as_str(), "date" | "dob" | "dod" | "birthday"),
        [first, .., last] => matches!(last.as_str(), "date" | "on" | "at" | "dt" | "day") || first == "date",
    }
}

/// Whether a column name suggests personal data (never offered as a grouping or
/// loaded as allowed values).
pub fn looks_personal(words: &[String]) -> bool {
    const ALONE: [&str; 14] = [
        "email",
        "phone",
        "mobile",
        "telephone",
        "tel",
        "address",
        "addr",
        "street",
        "postcode",
        "zip",
        "ssn",
        "mrn",
        "dob",
        "surname",
    ];
    let joined = words.join("_");
    words.iter().any(|w| ALONE.contains(&w.as_str()))
        || [
            "first_name",
            "last_name",
            "full_name",
            "given_name",
            "middle_name",
            "birth",
            "passport",
            "nhs",
        ]
        .iter()
        .any(|p| joined.contains(p))
}

/// Whether a column name suggests an external identifier matched exactly
/// (`mrn`, `isbn`, `sku`).
pub fn looks_like_identifier(words: &[String]) -> bool {
    const IDS: [&str; 9] = [
        "mrn", "isbn", "sku", "ssn", "uuid", "guid", "barcode", "ean", "upc",
    ];
    words.last().is_some_and(|w| IDS.contains(&w.as_str()))
}

/// Whether a column name suggests the human name of a row (`name`, `title`, `full_name`).
pub fn looks_like_label(words: &[String]) -> bool {
    matches!(words.last().map(String::as_str), Some("name" | "title" | "label"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn w(s: &str) -> Vec<String> {
        split_words(s)
    }

    #[test]
    fn snake_camel_pascal_and_shouting_case_split_into_the_same_words() {
        let cases: [(&str, &[&str]); 9] = [
            ("book_loans", &["book", "loans"]),
            ("bookLoans", &["book", "loans"]),
            ("BookLoans", &["book", "loans"]),
            ("BOOK_LOANS", &["book", "loans"]),
            ("ISBNCode", &["isbn", "code"]),
            ("patientID", &["patient", "id"]),
            ("area_cm2", &["area", "cm2"]),
            ("publishedYear2", &["published", "year2"]),
            ("  weird--name ", &["weird", "name"]),
        ];
        for (name, words) in cases {
            assert_eq!(w(name), words, "{name}");
        }
        assert_eq!(snake_case("publishedYear"), "published_year");
        assert_eq!(snake_case("2024sales"), "n_2024sales");
    }

    #[test]
    fn abbreviations_expand_inside_longer_names() {
        assert_eq!(expand_all(&w("pt_dob")).join(" "), "patient date of birth");
        assert_eq!(expand_all(&w("orderQty")).join(" "), "order quantity");
        assert_eq!(expand_all(&w("dx_code")).join(" "), "diagnosis code");
        assert_eq!(expand_all(&w("mrn")).join(" "), "medical record number");
        assert_eq!(expand_all(&w("price")).join(" "), "price");
        let sorted = ABBREVIATIONS.windows(2).all(|p| p[0].0 < p[1].0);
        assert!(sorted, "the table must stay sorted for binary search");
    }

    #[test]
    fn naive_singulars_and_plurals_cover_the_common_english_endings() {
        let cases = [
            ("clinics", "clinic"),
            ("categories", "category"),
            ("boxes", "box"),
            ("addresses", "address"),
            ("branches", "branch"),
            ("status", "status"),
            ("diagnosis", "diagnosis"),
            ("bus", "bus"),
            ("news", "news"),
        ];
        for (p, s) in cases {
            assert_eq!(singular(p), s, "{p}");
        }
        for (s, p) in [
            ("clinic", "clinics"),
            ("category", "categories"),
            ("box", "boxes"),
            ("day", "days"),
        ] {
            assert_eq!(plural(s), p, "{s}");
        }
        assert_eq!(plural("wounds"), "wounds", "already plural");
        assert_eq!(singular_phrase(&w("book_loans")), "book loan");
    }

    #[test]
    fn names_hint_at_dates_personal_data_identifiers_and_labels() {
        for d in ["birth_date", "assessed_on", "createdAt", "dob", "date_of_visit"] {
            assert!(looks_like_date(&w(d)), "{d}");
        }
        for d in ["updates", "on", "candidate", "region"] {
            assert!(!looks_like_date(&w(d)), "{d}");
        }
        for p in ["full_name", "email", "mrn", "birth_date", "lastName"] {
            assert!(looks_personal(&w(p)), "{p}");
        }
        for p in ["region", "name", "clinic_name"] {
            assert!(!looks_personal(&w(p)), "{p}");
        }
        assert!(looks_like_identifier(&w("book_isbn")) && !looks_like_identifier(&w("title")));
        assert!(looks_like_label(&w("clinic_name")) && !looks_like_label(&w("names_count")));
        assert_eq!(unit_of("cm2"), Some("cm2"));
    }
}
