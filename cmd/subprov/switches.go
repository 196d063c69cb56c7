package main

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/subprov/subprov/inventory"
)

const switchesUsage = `Usage: subprov switches rekey

Works on the switch inventory directly on DATABASE_URL (migrating it first).

  switches rekey
              seal every switch password anew under SUBPROV_SECRET: the last step of a rotation
              of the service secret, run with the new SUBPROV_SECRET and the old one in
              SUBPROV_SECRET_PREVIOUS (docs/network.md)

`

func cmdSwitches(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprint(stderr, "subprov switches: missing rekey\n\n"+switchesUsage+exitHelp)
		return errUsage
	}
	switch args[0] {
	case "-h", "--help", "-help", "help":
		fmt.Fprint(stdout, switchesUsage+exitHelp)
		return nil
	case "rekey":
		return cmdSwitchesRekey(ctx, args[1:], getenv, stdout, stderr)
	}
	fmt.Fprintf(stderr, "subprov switches: unknown subcommand %q\n\n%s", args[0], switchesUsage+exitHelp)
	return errUsage
}

func cmdSwitchesRekey(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	fs := newFlags("switches rekey", "switches rekey",
		"Seals every switch password anew under the current SUBPROV_SECRET. During a rotation, set the new\n"+
			"secret in SUBPROV_SECRET and the old one in SUBPROV_SECRET_PREVIOUS on every process, run this once,\n"+
			"then remove SUBPROV_SECRET_PREVIOUS. A password that opens under neither secret is left as it is and\n"+
			"named (exit status 1): set it again with PATCH /api/v1/switches/{switch_id}. Never prints a password.")
	if done, err := parse(fs, args, stdout, stderr); done {
		return err
	}
	st, sealer, err := sealedStore(ctx, getenv, stderr)
	if err != nil {
		return err
	}
	defer st.Close()
	resealed, unopened, err := inventory.ResealSwitches(ctx, st, sealer)
	if err != nil {
		return fmt.Errorf("switches rekey: %w", err)
	}
	fmt.Fprintf(stdout, "%d switch password(s) sealed under the current secret\n", resealed)
	if len(unopened) > 0 {
		return fmt.Errorf("switches rekey: %d password(s) open under neither SUBPROV_SECRET nor SUBPROV_SECRET_PREVIOUS: %s",
			len(unopened), strings.Join(unopened, ", "))
	}
	return nil
}
