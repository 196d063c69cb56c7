package locale_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/subprov/subprov"
	"github.com/subprov/subprov/locale"
)

// verbs are the fmt verbs of a format, in order.
var verbRE = regexp.MustCompile(`%(\[\d+\])?[-+# 0]*\d*(\.\d+)?[a-zA-Z%]`)

// TestCatalogueComplete fails when a message lacks its French or its English, when the two
// do not take the same arguments, or when a key is listed twice.
func TestCatalogueComplete(t *testing.T) {
	t.Parallel()
	seen := map[string]bool{}
	for _, m := range locale.Messages {
		if seen[m.Key] {
			t.Errorf("%s: listed twice", m.Key)
		}
		seen[m.Key] = true
		if strings.TrimSpace(m.EN) == "" {
			t.Errorf("%s: no English source", m.Key)
		}
		if strings.TrimSpace(m.FR) == "" {
			t.Errorf("%s: no French", m.Key)
		}
		if en, fr := verbRE.FindAllString(m.EN, -1), verbRE.FindAllString(m.FR, -1); !slices.Equal(en, fr) {
			t.Errorf("%s: placeholders differ: en %v, fr %v", m.Key, en, fr)
		}
	}
}

// TestEveryKeyInCatalogue reads the repository's Go source and fails when a text is written
// by a key the catalogue does not hold (it would print the key to the subscriber).
func TestEveryKeyInCatalogue(t *testing.T) {
	t.Parallel()
	keys := map[string]bool{}
	for _, m := range locale.Messages {
		keys[m.Key] = true
	}
	calls := map[string]bool{"T": true, "Msg": true}
	used := 0
	eachSourceFile(t, func(path string, f *ast.File) {
		ast.Inspect(f, func(n ast.Node) bool {
			c, ok := n.(*ast.CallExpr)
			if !ok || len(c.Args) == 0 {
				return true
			}
			sel, ok := c.Fun.(*ast.SelectorExpr)
			if !ok || !calls[sel.Sel.Name] {
				return true
			}
			lit, ok := c.Args[0].(*ast.BasicLit)
			if !ok || lit.Kind != token.STRING {
				return true
			}
			key, _ := strconv.Unquote(lit.Value)
			if !strings.Contains(key, ".") || strings.ContainsAny(key, " %") {
				return true
			}
			used++
			if !keys[key] {
				t.Errorf("%s: key %q is not in the catalogue", path, key)
			}
			return true
		})
	})
	if used < 20 {
		t.Fatalf("found %d keyed texts in the source: the scan is broken", used)
	}
}

// TestTemplateKeysInCatalogue fails when a page template writes a key the catalogue lacks.
func TestTemplateKeysInCatalogue(t *testing.T) {
	t.Parallel()
	keys := map[string]bool{}
	for _, m := range locale.Messages {
		keys[m.Key] = true
	}
	names, err := filepath.Glob("../web/templates/*.html")
	if err != nil || len(names) == 0 {
		t.Fatalf("templates: %v %v", names, err)
	}
	re := regexp.MustCompile(`\.T "([^"]+)"`)
	for _, n := range names {
		b, err := os.ReadFile(n)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range re.FindAllStringSubmatch(string(b), -1) {
			if !keys[m[1]] {
				t.Errorf("%s: key %q is not in the catalogue", n, m[1])
			}
		}
	}
}

func TestFormatting(t *testing.T) {
	t.Parallel()
	const nb = "\u00a0"
	day := time.Date(2026, 11, 29, 0, 0, 0, 0, time.UTC)
	first := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	toronto, err := time.LoadLocation("America/Toronto")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name, got, want string
	}{
		{"fr money", locale.FR.Money(1250, "CAD"), "12,50" + nb + "$"},
		{"fr money grouped", locale.FR.Money(123456, "CAD"), "1" + nb + "234,56" + nb + "$"},
		{"fr money millions", locale.FR.Money(123456789, "CAD"), "1" + nb + "234" + nb + "567,89" + nb + "$"},
		{"fr money negative", locale.FR.Money(-500, "CAD"), "-5,00" + nb + "$"},
		{"fr money euro", locale.FR.Money(1250, "EUR"), "12,50" + nb + "€"},
		{"fr money other", locale.FR.Money(1250, "CHF"), "12,50" + nb + "CHF"},
		{"en money", locale.EN.Money(1250, "CAD"), "$12.50"},
		{"en money grouped", locale.EN.Money(123456, "CAD"), "$1,234.56"},
		{"en money negative", locale.EN.Money(-5, "USD"), "-$0.05"},
		{"en money other", locale.EN.Money(1250, "CHF"), "12.50 CHF"},
		{"en zero", locale.EN.Money(0, "CAD"), "$0.00"},
		{"fr number", locale.FR.Number(1234567), "1" + nb + "234" + nb + "567"},
		{"en number", locale.EN.Number(1234567), "1,234,567"},
		{"small number", locale.FR.Number(999), "999"},
		{"fr date", locale.FR.Date(day), "29 novembre 2026"},
		{"fr first", locale.FR.Date(first), "1er décembre 2026"},
		{"en date", locale.EN.Date(day), "November 29, 2026"},
		{"fr day", locale.FR.Day(day), "dimanche 29 novembre 2026"},
		{"en day", locale.EN.Day(day), "Sunday, November 29, 2026"},
		{"fr iso", locale.FR.ISODate("2026-08-15"), "15 août 2026"},
		{"not a date", locale.FR.ISODate("2026-11"), "2026-11"},
		{"fr clock", locale.FR.Clock(time.Date(2026, 1, 1, 8, 5, 0, 0, time.UTC)), "8 h 05"},
		{"en clock", locale.EN.Clock(time.Date(2026, 1, 1, 8, 5, 0, 0, time.UTC)), "08:05"},
		{"fr moment", locale.FR.Moment(time.Date(2026, 11, 20, 10, 0, 0, 0, toronto)), "20 novembre 2026 à 10 h 00 EST"},
		{"en moment", locale.EN.Moment(time.Date(2026, 7, 1, 9, 30, 0, 0, toronto)), "July 1, 2026 at 09:30 EDT"},
		{"fr text with money", locale.Msg("pdf.please_pay", locale.Amount{Money: 1250, Currency: "CAD"}, locale.DateOf("2026-11-29")).In(locale.FR),
			"Veuillez payer 12,50" + nb + "$ d’ici le 29 novembre 2026."},
		{"en text with money", locale.Msg("pdf.please_pay", locale.Amount{Money: subprov.Money(123456), Currency: "CAD"}, locale.DateOf("2026-11-29")).In(locale.EN),
			"Please pay $1,234.56 by November 29, 2026."},
	} {
		if c.got != c.want {
			t.Errorf("%s: got %q, want %q", c.name, c.got, c.want)
		}
	}
}

func TestChoose(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		person, accept, provider string
		want                     locale.Lang
	}{
		{"", "", "", locale.EN},
		{"", "", "fr", locale.FR},
		{"", "", "xx", locale.EN},
		{"en", "", "fr", locale.EN},
		{"fr", "en-US", "en", locale.FR},
		{"", "fr-CA,fr;q=0.9", "en", locale.FR},
		{"", "fr-FR", "en", locale.FR},
		{"", "en-US,en;q=0.9", "fr", locale.EN},
		{"", "de-DE", "fr", locale.FR}, // nothing supported: the provider's default
		{"", "not a header;;", "fr", locale.FR},
		{"xx", "", "fr", locale.FR},
	} {
		if got := locale.Choose(c.person, c.accept, c.provider); got != c.want {
			t.Errorf("Choose(%q, %q, %q) = %s, want %s", c.person, c.accept, c.provider, got, c.want)
		}
	}
}

// TestEveryRefusalInCatalogue reads the repository's Go source for the stable codes of coded
// errors (subprov.Errorf's reason, an Error literal's Reason) and fails when the catalogue has
// no error.<code> message for one: a subscriber would read that refusal in English.
func TestEveryRefusalInCatalogue(t *testing.T) {
	t.Parallel()
	keys := map[string]bool{}
	for _, m := range locale.Messages {
		keys[m.Key] = true
	}
	reasons := refusalReasons(t)
	if len(reasons) < 40 {
		t.Fatalf("found %d codes in the source: the scan is broken", len(reasons))
	}
	// An error with no reason of its own is answered with its class as the code.
	for _, c := range []subprov.Code{subprov.ECONFLICT, subprov.EINTERNAL, subprov.EINVALID, subprov.ENOTFOUND,
		subprov.EUNAUTHORIZED, subprov.EFORBIDDEN, subprov.EUNAVAILABLE, subprov.EUNCONFIGURED, subprov.EGONE,
		subprov.EBADREQUEST, subprov.ETOOLARGE, subprov.ERATELIMITED, subprov.ENOTIMPLEMENTED, subprov.EMETHOD} {
		reasons[string(c)] = "the error classes"
	}
	for reason, where := range reasons {
		if !keys["error."+reason] {
			t.Errorf("%s: code %q has no error.%s message in the catalogue", where, reason, reason)
		}
	}
}

// refusalReasons is every coded error's stable code written in the repository's Go source
// (tests aside), with a file that writes it.
func refusalReasons(t *testing.T) map[string]string {
	t.Helper()
	reasons := map[string]string{}
	add := func(e ast.Expr, path string) {
		if lit, ok := e.(*ast.BasicLit); ok && lit.Kind == token.STRING {
			r, _ := strconv.Unquote(lit.Value)
			reasons[r] = path
		}
	}
	// errorBuilders take (code, reason, …): subprov.Errorf, httpapi/api.Errorf, billingError.
	errorBuilders := map[string]bool{"Errorf": true, "billingError": true}
	eachSourceFile(t, func(path string, f *ast.File) {
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.CallExpr:
				name := ""
				switch fn := n.Fun.(type) {
				case *ast.SelectorExpr:
					name = fn.Sel.Name
				case *ast.Ident:
					name = fn.Name
				}
				if errorBuilders[name] && len(n.Args) >= 3 {
					if code, ok := n.Args[0].(*ast.SelectorExpr); ok && strings.HasPrefix(code.Sel.Name, "E") {
						add(n.Args[1], path)
					} else if code, ok := n.Args[0].(*ast.Ident); ok && strings.HasPrefix(code.Name, "E") {
						add(n.Args[1], path)
					}
				}
			case *ast.CompositeLit:
				if !isErrorType(n.Type) {
					return true
				}
				for _, el := range n.Elts {
					if kv, ok := el.(*ast.KeyValueExpr); ok {
						if k, ok := kv.Key.(*ast.Ident); ok && k.Name == "Reason" {
							add(kv.Value, path)
						}
					}
				}
			}
			return true
		})
	})
	return reasons
}

// eachSourceFile parses every Go file of the repository but the tests and calls fn with it.
func eachSourceFile(t *testing.T, fn func(path string, f *ast.File)) {
	t.Helper()
	err := filepath.WalkDir("..", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (strings.HasPrefix(d.Name(), ".") || d.Name() == "node_modules") && path != ".." {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, 0)
		if err != nil {
			return err
		}
		fn(path, f)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// isErrorType reports whether a composite literal's type is subprov.Error (Error inside the
// root package).
func isErrorType(e ast.Expr) bool {
	switch e := e.(type) {
	case *ast.SelectorExpr:
		x, ok := e.X.(*ast.Ident)
		return ok && x.Name == "subprov" && e.Sel.Name == "Error"
	case *ast.Ident:
		return e.Name == "Error"
	}
	return false
}
