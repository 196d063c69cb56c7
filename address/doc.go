// Package address parses and normalises Canadian street addresses so that
// the way a person types an address does not change what it matches.
//
// Partners type addresses in English or French, with or without accents,
// abbreviated or not, with house-number suffixes fused or separated and
// postal codes in any case and spacing. Key reduces all of these to one
// spelling:
//
//   - lower case, accents folded (é→e, ô→o, ç→c, œ→oe), punctuation turned
//     into spaces, white space collapsed; an English possessive is joined
//     ("St. John's" → "saint johns");
//   - street types become one canonical token each, English and French kept
//     apart: St/Str/Street→street, Rue/R→rue, Ave/Av→avenue,
//     Blvd/Boul/Bd→boulevard, Ch/Chemin→chemin, Rd→road, Dr→drive,
//     Cres→crescent, Pl→place, Ct→court, Terr→terrace, Pkwy→parkway,
//     Hwy→highway, Sq→square, Cir→circle, Ln→lane, Mtée→montee, Côte→cote…;
//   - directions become north/south/east/west (N/Nord, S/Sud, E/Est,
//     W/O/Ouest; NE/NW/SE/SW become northeast…). Full words are always
//     rewritten; single letters only where a direction belongs (after a
//     house number, after a trailing street type, or after a name that
//     follows a street type), so the "O" of "Rue O'Connor" stays a letter;
//   - "St"/"Ste" before a name means Saint/Sainte ("St-Laurent",
//     "1 St Clair Ave"), after a name Street ("Queen St W"); "Ste" before a
//     number is Suite;
//   - a house-number suffix is fused: "88a", "88 a" and "88-a" all give
//     "88a" (a lone n/s/e/w/o after a number is a direction instead, unless
//     a hyphen binds it: "88 E" is "88 east", "88-E" is "88e");
//   - a postal code becomes its compact lower form ("H3C 2B5", "h3c-2b5"
//     → "h3c2b5"; a trailing half-typed "H3C 2B" → "h3c2b").
//
// Key is idempotent (Key(Key(s)) == Key(s)), so stored keys can be
// re-normalised safely, and Tokens is Key split into words.
//
// # Matching contract
//
// A building is a candidate for an autocomplete query q when every token of
// Tokens(q) is a prefix of some token of Key(building display string).
// Because both sides go through the same normalisation, "88 A Queen St.
// West" finds "88A Queen Street W", "boul st-laurent" finds "Boulevard
// Saint-Laurent", "h3c2b5" finds "H3C 2B5" and "montreal" finds
// "Montréal". Prefixes work inside tokens, so a half-typed last word still
// matches ("Que" is a prefix of "queen", "h3c" of "h3c2b5"). The limitation
// is that a half-typed word which is itself an abbreviation is expanded or
// kept as written, not both: "88 Queen S" keeps "s" (a prefix of "street"),
// "120 St" keeps "st" (a prefix of "street" but not of "saint"), and French
// directions are canonicalised to English, so a half-typed "Oue" does not
// reach "west".
//
// PostalCode validates and formats postal codes, Province recognises
// province and territory names and codes, and Parse splits one free-text
// line into Number, Street, Unit, City, Province and PostalCode, each in the
// same normalised form.
package address
