package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/subprov/subprov"
	"github.com/subprov/subprov/app"
	"github.com/subprov/subprov/auth"
	"github.com/subprov/subprov/clock"
	"github.com/subprov/subprov/config"
	"github.com/subprov/subprov/operators"
	"github.com/subprov/subprov/store"
)

// stdin is where 'operator add' reads the password: the process's standard input, a reader
// of their own in tests.
var stdin io.Reader = os.Stdin

const operatorUsage = `Usage: subprov operator <add|list> ...

Manages the operators who sign in to the operations surface and the console, directly on
DATABASE_URL (migrating it first): how a fresh production database gets its first admin
without a fixture, and how an admin who is locked out gets back in.

  operator add EMAIL --role ROLE [--provider ID]
              create the operator, or update the one with that e-mail; the password is read
              from standard input
  operator list
              list every operator (never a password or a second-factor key)

Run 'subprov operator add --help' or 'subprov operator list --help' for more.

`

func cmdOperator(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprint(stderr, "subprov operator: missing add or list\n\n"+operatorUsage+exitHelp)
		return errUsage
	}
	switch args[0] {
	case "-h", "--help", "-help", "help":
		fmt.Fprint(stdout, operatorUsage+exitHelp)
		return nil
	case "add":
		return cmdOperatorAdd(ctx, args[1:], getenv, stdout, stderr)
	case "list":
		return cmdOperatorList(ctx, args[1:], getenv, stdout, stderr)
	}
	fmt.Fprintf(stderr, "subprov operator: unknown subcommand %q\n\n%s", args[0], operatorUsage+exitHelp)
	return errUsage
}

// operatorService opens DATABASE_URL, migrated, and the operators capability on it: the rules
// of the HTTP routes, acting as the system.
func operatorService(ctx context.Context, getenv func(string) string, stderr io.Writer) (*operators.Service, func(), error) {
	cfg, log, err := loadConfig(getenv, stderr)
	if err != nil {
		return nil, nil, err
	}
	if err := app.Migrate(ctx, cfg, log); err != nil {
		return nil, nil, err
	}
	st, err := store.Open(ctx, cfg.DatabaseURL)
	if err != nil {
		return nil, nil, err
	}
	a := &auth.Service{Store: st, Clock: clock.Real{}, PasswordCost: cfg.PasswordCost}
	return &operators.Service{Store: st, Auth: a}, func() { st.Close() }, nil
}

func cmdOperatorAdd(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	fs := newFlags("operator add", "operator add EMAIL --role ROLE [--provider ID] [--reset-second-factor]",
		"Creates the operator EMAIL, or updates the operator that has it: its role, its scope and its password,\n"+
			"and enables it if it was disabled. The password is read from standard input (at least 10 characters;\n"+
			"one trailing newline is dropped), so it never appears in the process list or the shell's history:\n\n"+
			"  printf '%s\\n' \"$ADMIN_PASSWORD\" | subprov operator add admin@example.com --role admin\n\n"+
			"Without --provider the operator is platform-wide (it sees every provider); with it, it sees that\n"+
			"provider only. Roles: admin, support, billing, installer, viewer (docs/operations.md). A new password\n"+
			"ends the operator's sessions; its second factor, if on, stays on unless --reset-second-factor turns\n"+
			"it off (an admin who lost its authenticator and its recovery codes, or after SUBPROV_SECRET changed:\n"+
			"the operator signs in with its password and enrols again). The rules are the API's: every problem\n"+
			"is listed and nothing is written, and the last active platform admin cannot be demoted.")
	role := fs.String("role", "", "the operator's role: admin, support, billing, installer or viewer (required)")
	provider := fs.String("provider", "", "the id of the provider the operator works for; none for a platform-wide operator")
	reset := fs.Bool("reset-second-factor", false, "turn the operator's second factor off (its key and recovery codes are dropped)")
	if done, err := parse(fs, flagsFirst(fs, args), stdout, stderr, "EMAIL"); done {
		return err
	}
	if *role == "" {
		fmt.Fprint(stderr, "subprov operator add: --role is required\n\n")
		fs.SetOutput(stderr)
		fs.Usage()
		return errUsage
	}
	password, err := readPassword(stderr)
	if err != nil {
		return err
	}
	svc, done, err := operatorService(ctx, getenv, stderr)
	if err != nil {
		return err
	}
	defer done()
	o, created, err := svc.Put(ctx, operators.New{Email: fs.Arg(0), Password: password, Role: subprov.Role(*role), ProviderID: *provider})
	if err != nil {
		return describe(err)
	}
	verb := "updated"
	if created {
		verb = "created"
	}
	fmt.Fprintf(stdout, "%s operator %s (%s, %s), id %s\n", verb, o.Email, o.Role, scopeOf(o), o.ID)
	if *reset && o.TOTPEnabled {
		if _, err := svc.ResetSecondFactor(ctx, operators.System, o.ID); err != nil {
			return describe(err)
		}
		fmt.Fprintf(stdout, "second factor of %s turned off: it signs in with its password and enrols again\n", o.Email)
	}
	return nil
}

// readPassword reads the password from standard input, prompting on stderr when a person is
// typing it, and drops one trailing newline.
func readPassword(stderr io.Writer) (string, error) {
	if f, ok := stdin.(*os.File); ok && config.IsTerminal(f) {
		fmt.Fprint(stderr, "Password (at least 10 characters), then Enter: ")
	}
	b, err := io.ReadAll(io.LimitReader(bufio.NewReader(stdin), 4096))
	if err != nil {
		return "", fmt.Errorf("read the password from standard input: %w", err)
	}
	s := string(b)
	if t, ok := strings.CutSuffix(s, "\n"); ok {
		s = strings.TrimSuffix(t, "\r")
	}
	return s, nil
}

// describe turns a validation error into one line per problem, field by field.
func describe(err error) error {
	e, ok := subprov.AsError(err)
	if !ok || len(e.Fields) == 0 {
		return err
	}
	var lines []string
	for _, f := range slices.Sorted(maps.Keys(e.Fields)) {
		lines = append(lines, f+": "+e.Fields[f])
	}
	return errors.New(strings.Join(lines, "; "))
}

func scopeOf(o *subprov.Operator) string {
	if o.Platform() {
		return "platform-wide"
	}
	return "provider " + o.ProviderID
}

func cmdOperatorList(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	fs := newFlags("operator list", "operator list", "Lists every operator by e-mail: its role, its provider (- for platform-wide), whether its\n"+
		"second factor is on, when it was disabled, and its id. Never a password or a key.")
	if done, err := parse(fs, args, stdout, stderr); done {
		return err
	}
	svc, done, err := operatorService(ctx, getenv, stderr)
	if err != nil {
		return err
	}
	defer done()
	tw := tabwriter.NewWriter(stdout, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "EMAIL\tROLE\tPROVIDER\tSECOND FACTOR\tDISABLED\tID")
	page := subprov.Page{Limit: subprov.MaxPageLimit}
	for {
		list, next, err := svc.All(ctx, page)
		if err != nil {
			return err
		}
		for _, o := range list {
			provider, totp, disabled := o.ProviderID, "off", "-"
			if provider == "" {
				provider = "-"
			}
			if o.TOTPEnabled {
				totp = "on"
			}
			if o.DisabledAt != nil {
				disabled = o.DisabledAt.UTC().Format("2006-01-02T15:04:05Z")
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", o.Email, o.Role, provider, totp, disabled, o.ID)
		}
		if next == "" {
			break
		}
		if page, err = subprov.ParsePage(page.Limit, true, next); err != nil {
			return err
		}
	}
	return tw.Flush()
}

// flagsFirst moves a command's flags (and the values of those that take one) before its
// operands, so that flags may follow the operand as people write them (add EMAIL --role admin);
// the flag package stops at the first operand. Everything after "--" stays an operand.
func flagsFirst(fs *flag.FlagSet, args []string) []string {
	var flags, operands []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			operands = append(operands, args[i+1:]...)
			i = len(args)
		case strings.HasPrefix(a, "-") && a != "-":
			flags = append(flags, a)
			name := strings.TrimLeft(a, "-")
			if strings.Contains(name, "=") {
				continue
			}
			if f := fs.Lookup(name); f != nil && !isBool(f) && i+1 < len(args) {
				i++
				flags = append(flags, args[i])
			}
		default:
			operands = append(operands, a)
		}
	}
	if len(operands) > 0 {
		flags = append(flags, "--")
	}
	return append(flags, operands...)
}

func isBool(f *flag.Flag) bool {
	b, ok := f.Value.(interface{ IsBoolFlag() bool })
	return ok && b.IsBoolFlag()
}
