package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"

	"github.com/spf13/pflag"

	"github.com/cryptvol/cryptvol/archive"
	"github.com/cryptvol/cryptvol/internal/ctxio"
)

// `cryptvol archive SUBCOMMAND ARCHIVE ...`: the encrypted append-only
// archive of package archive (format in archive/SPEC.md). Flags,
// credentials, exit codes and the calls into the package only: the
// format, the walking of local files, extraction and the texts of its
// reports live there.

func init() {
	register(&command{
		name:    "archive",
		summary: "encrypted append-only archive of many small files (create, add, ls, get, cat, rm, compact, verify)",
		usage:   archiveUsage,
		run:     runArchive,
	})
	// Set here, not in the map literal, to avoid an initialisation cycle
	// (the runners look their help up in the map).
	for name, run := range map[string]func(context.Context, *app, []string) error{
		"create": runArchiveCreate, "add": runArchiveAdd, "ls": runArchiveLs, "get": runArchiveGet,
		"cat": runArchiveCat, "rm": runArchiveRm, "compact": runArchiveCompact, "verify": runArchiveVerify,
	} {
		archiveSubcommands[name].run = run
	}
}

func runArchive(ctx context.Context, a *app, args []string) error {
	if len(args) == 0 {
		return usageError(errors.New("missing subcommand: create, add, ls, get, cat, rm, compact or verify"))
	}
	switch args[0] {
	case "-h", "--help", "help":
		// The options every subcommand shares.
		fl := newFlags(commands["archive"], a)
		addArchiveCredFlags(fl)
		shownFlags = fl
		fmt.Fprint(a.stdout, helpText(commands["archive"], fl))
		return errHelpShown
	}
	sub, ok := archiveSubcommands[args[0]]
	if !ok {
		return usageError(fmt.Errorf("unknown subcommand %q%s: want create, add, ls, get, cat, rm, compact or verify", args[0], didYouMean(args[0], archiveSubcommandNames())))
	}
	return sub.run(ctx, a, args[1:])
}

// archiveCred holds the credential flags of the archive subcommands: a
// subset of the volume ones, with the same spellings.
type archiveCred struct {
	cf      *credFlags
	keyfile string
}

func addArchiveCredFlags(fs *pflag.FlagSet) *archiveCred {
	ac := &archiveCred{cf: &credFlags{}}
	fs.StringVar(&ac.cf.passwordFile, "password-file", "", "read the password from the first line of `FILE` (- = stdin)")
	fs.StringVarP(&ac.cf.password, "password", "p", "", "password on the command line (visible to other users: prefer --password-file)")
	fs.Lookup("password").NoOptDefVal = ""
	fs.StringVarP(&ac.keyfile, "keyfile", "k", "", "key `FILE` (32 bytes to 1 MiB) instead of a password")
	fs.BoolVar(&ac.cf.nonInteractive, "non-interactive", false, "never prompt; fail if something is missing")
	return ac
}

// credentials reads the key file or the password (twice on a terminal for
// a new archive).
func (ac *archiveCred) credentials(a *app, fs *pflag.FlagSet, isNew bool) (archive.Credentials, error) {
	if ac.keyfile != "" {
		if ac.cf.passwordFile != "" || fs.Changed("password") {
			return archive.Credentials{}, usageError(errors.New("give a password or a key file, not both"))
		}
		b, err := archive.ReadKeyFile(ac.keyfile)
		if sizeErr := (*archive.KeyFileSizeError)(nil); errors.As(err, &sizeErr) {
			return archive.Credentials{}, usageError(err)
		}
		return archive.Credentials{KeyFile: b}, err
	}
	var pw []byte
	var err error
	if isNew {
		pw, err = ac.cf.newPassword(a, fs, "archive", false)
	} else {
		pw, err = ac.cf.readPassword(a, fs, ac.cf.passwordFile, "password", "Enter password: ", false)
	}
	if err != nil {
		return archive.Credentials{}, err
	}
	if pw == nil {
		pw = []byte{}
	}
	return archive.Credentials{Password: pw}, nil
}

// archiveError maps the package's errors to the documented exit codes.
func archiveError(err error) error {
	if err == nil {
		return nil
	}
	var ce *cliError
	if errors.As(err, &ce) {
		return err
	}
	switch {
	case errors.Is(err, archive.ErrWrongKey), errors.Is(err, archive.ErrNotArchive):
		return withCode(exitAuth, err)
	case errors.Is(err, archive.ErrDamaged), errors.Is(err, archive.ErrUnsupported):
		return withCode(exitDamaged, err)
	case errors.Is(err, fs.ErrExist):
		return withCode(exitDestroy, err)
	case errors.Is(err, archive.ErrInvalidName):
		return usageError(err)
	}
	return err
}

// openedArchive is an archive as the commands open it, with what its
// tail holds.
type openedArchive struct {
	*archive.Archive
	path string
	tail archive.TailReport
}

// openArchive reads the credentials and opens the archive. Opened for
// reading, an archive whose index is damaged is pieced together from the
// readable parts of it (archive.OpenOptions.Salvage); bytes after the last
// complete commit are described in a warning. Opened for a change, an
// archive whose tail holds a commit a repair can recover is refused (exit
// 5): the change would cut it off.
func openArchive(ctx context.Context, a *app, fl *pflag.FlagSet, ac *archiveCred, path string, readOnly bool) (*openedArchive, error) {
	cred, err := ac.credentials(a, fl, false)
	if err != nil {
		return nil, err
	}
	defer cred.Wipe()
	ar, err := archive.Open(ctx, path, cred, &archive.OpenOptions{ReadOnly: readOnly, Salvage: readOnly, Warn: func(m string) { a.warnf("%s", m) }})
	if err != nil {
		if errors.Is(err, archive.ErrDamaged) {
			return nil, withCode(exitDamaged, fmt.Errorf("%w; 'archive verify' says what a repair would keep", err))
		}
		return nil, archiveError(err)
	}
	oa := &openedArchive{Archive: ar, path: path}
	if s := ar.Salvaged(); s != nil {
		a.warnf("%s: the index is damaged (%s); using the %d members its readable parts name", path, s, ar.Len())
	}
	if ar.Tail() > 0 && ar.Salvaged() == nil {
		if oa.tail, err = ar.TailReport(ctx); err != nil {
			ar.Close()
			return nil, archiveError(err)
		}
		text := oa.tail.Text(path, ar.Commits(), !readOnly)
		if oa.tail.Commit != 0 && !readOnly {
			ar.Close()
			return nil, withCode(exitDestroy, errors.New(text))
		}
		a.warnf("%s", text)
	}
	return oa, nil
}

// readDamage is how a read command ends on a damaged archive: exit 3 when
// the index was salvaged, when the tail holds a commit it did not read,
// or -- with tailToo, for ls, which says what the archive holds -- when
// anything follows the last complete commit.
func readDamage(oa *openedArchive, tailToo bool) error {
	switch {
	case oa.Salvaged() != nil:
		return withCode(exitDamaged, fmt.Errorf("%s is damaged (see above); 'archive verify' says what a repair would keep and remove", oa.path))
	case oa.tail.Commit != 0:
		return withCode(exitDamaged, fmt.Errorf("%s ends with commit %d cut short, not read (see above): run 'archive verify --repair' to recover it", oa.path, oa.tail.Commit))
	case tailToo && oa.Tail() > 0:
		return withCode(exitDamaged, fmt.Errorf("%s ends with %s that are not a complete commit (see above); 'archive verify --repair' removes them", oa.path, archive.BytesText(oa.Tail())))
	}
	return nil
}

func archiveFlags(name string, a *app) (*pflag.FlagSet, *archiveCred, *command) {
	c := archiveSubcommands[name]
	fl := newFlags(c, a)
	return fl, addArchiveCredFlags(fl), c
}

func runArchiveCreate(ctx context.Context, a *app, args []string) error {
	fl, ac, c := archiveFlags("create", a)
	cipherName := fl.String("cipher", "aes-256-gcm", "aes-256-gcm or xchacha20-poly1305")
	mem := fl.String("argon2-memory", "64M", "Argon2id memory (K, M, G suffixes)")
	passes := fl.Uint32("argon2-passes", archive.DefaultArgon2.Passes, "Argon2id passes")
	lanes := fl.Uint32("argon2-lanes", archive.DefaultArgon2.Lanes, "Argon2id lanes")
	recursive := fl.BoolP("recursive", "r", false, "add directories with everything in them")
	if err := parseFlags(fl, c, a, args); err != nil {
		return err
	}
	if err := wantArgs(fl, 1, -1); err != nil {
		return err
	}
	ciph, err := archive.ParseCipher(*cipherName)
	if err != nil {
		return usageError(err)
	}
	m, err := parseSize(*mem)
	if err != nil || m < 1024 || m/1024 > 1<<32-1 {
		return usageError(fmt.Errorf("--argon2-memory %s: want 8K to 4G", *mem))
	}
	path := fl.Arg(0)
	if _, err := os.Lstat(path); err == nil {
		return withCode(exitDestroy, fmt.Errorf("%s exists", path))
	}
	srcs, err := archive.Sources(fl.Args()[1:], "", *recursive)
	if err != nil {
		return sourcesError(err)
	}
	cred, err := ac.credentials(a, fl, true)
	if err != nil {
		return err
	}
	defer cred.Wipe()
	o := &archive.CreateOptions{Cipher: ciph}
	if cred.KeyFile == nil {
		o.Argon2 = archive.Argon2Params{MemoryKiB: uint32(m / 1024), Passes: *passes, Lanes: *lanes}
	} else if fl.Changed("argon2-memory") || fl.Changed("argon2-passes") || fl.Changed("argon2-lanes") {
		return usageError(errors.New("the --argon2-* options apply to a password, not a key file"))
	}
	ar, err := archive.Create(ctx, path, cred, o)
	if err != nil {
		return archiveError(err) // a refused Argon2 cost is archive.ErrInvalidOption: exit 1
	}
	if err := addSourcesError(ar.AddSources(ctx, srcs, addSourcesOptions(a, false)), len(srcs)); err != nil {
		ar.Close()
		os.Remove(path)
		if errors.Is(err, context.Canceled) || exitCodeFor(err) == exitCancelled {
			return interrupted("%s not created", path)
		}
		return archiveError(err)
	}
	return ar.Close()
}

func runArchiveAdd(ctx context.Context, a *app, args []string) error {
	fl, ac, c := archiveFlags("add", a)
	recursive := fl.BoolP("recursive", "r", false, "add directories with everything in them")
	force := fl.Bool("force", false, "replace members that exist")
	rename := fl.String("name", "", "member `NAME` for a single PATH (required for -)")
	if err := parseFlags(fl, c, a, args); err != nil {
		return err
	}
	if err := wantArgs(fl, 2, -1); err != nil {
		return err
	}
	if *rename != "" && fl.NArg() != 2 {
		return usageError(errors.New("--name names a single PATH"))
	}
	srcs, err := archive.Sources(fl.Args()[1:], *rename, *recursive)
	if err != nil {
		return sourcesError(err)
	}
	ar, err := openArchive(ctx, a, fl, ac, fl.Arg(0), false)
	if err != nil {
		return err
	}
	defer ar.Close()
	return archiveError(addSourcesError(ar.AddSources(ctx, srcs, addSourcesOptions(a, *force)), len(srcs)))
}

func runArchiveLs(ctx context.Context, a *app, args []string) error {
	fl, ac, c := archiveFlags("ls", a)
	long := fl.BoolP("long", "l", false, "show mode, size and modification time")
	asJSON := fl.Bool("json", false, "print a JSON array: name, type, size, mode, mtime")
	if err := parseFlags(fl, c, a, args); err != nil {
		return err
	}
	if err := wantArgs(fl, 1, 1); err != nil {
		return err
	}
	ar, err := openArchive(ctx, a, fl, ac, fl.Arg(0), true)
	if err != nil {
		return err
	}
	defer ar.Close()
	ents := []jsonEntry{}
	for _, e := range ar.List() {
		switch {
		case *asJSON:
			ents = append(ents, jsonEntry{Name: e.Name, Type: entryType(e.Mode), Size: e.Size, Mode: e.Mode.String(), ModTime: e.ModTime})
		case *long:
			fmt.Fprintln(a.stdout, e.LongText())
		default:
			fmt.Fprintln(a.stdout, e.Name)
		}
	}
	if *asJSON {
		if err := writeJSON(a.stdout, ents); err != nil {
			return err
		}
	}
	if ar.Salvaged() != nil {
		// Listed from a damaged index: say what a repair would keep
		// and remove (this reads the whole archive).
		p, err := ar.Check(ctx)
		return planDamage(&app{stdin: a.stdin, stdout: a.stderr, stderr: a.stderr}, p, err)
	}
	return readDamage(ar, true)
}

func runArchiveGet(ctx context.Context, a *app, args []string) error {
	fl, ac, c := archiveFlags("get", a)
	dir := fl.StringP("directory", "C", ".", "extract below `DIR` (created if missing)")
	force := fl.Bool("force", false, "overwrite existing files")
	if err := parseFlags(fl, c, a, args); err != nil {
		return err
	}
	if err := wantArgs(fl, 1, -1); err != nil {
		return err
	}
	ar, err := openArchive(ctx, a, fl, ac, fl.Arg(0), true)
	if err != nil {
		return err
	}
	defer ar.Close()
	sel, err := ar.Select(fl.Args()[1:])
	if err != nil {
		return err
	}
	damaged := func(_ archive.Entry, err error) { fmt.Fprintf(a.stderr, "DAMAGED: %v (not extracted)\n", err) }
	rep, err := ar.ExtractAll(ctx, *dir, sel, &archive.ExtractOptions{Replace: *force, Damaged: damaged})
	var xe *archive.ExtractError
	switch {
	case errors.As(err, &xe) && xe.Entry == nil:
		return interrupted("%d of %d members extracted", rep.Extracted, rep.Files)
	case errors.As(err, &xe) && errors.Is(xe.Err, context.Canceled):
		return interrupted("%d of %d members extracted; %s partial, removed", rep.Extracted, rep.Files, xe.Entry.Name)
	case errors.As(err, &xe) && xe.Err == archive.ErrInvalidName:
		return withCode(exitDamaged, fmt.Errorf("member %q would be extracted outside %s: refused", xe.Entry.Name, *dir))
	case errors.As(err, &xe) && xe.Err == archive.ErrExists:
		return withCode(exitDestroy, fmt.Errorf("%s exists (use --force to overwrite)", xe.Path))
	case err != nil:
		return archiveError(err)
	}
	if len(rep.Damaged) > 0 {
		return withCode(exitDamaged, fmt.Errorf("%d of %d files do not authenticate and were not extracted (listed above); %d extracted", len(rep.Damaged), rep.Files, rep.Extracted))
	}
	return readDamage(ar, false)
}

func runArchiveCat(ctx context.Context, a *app, args []string) error {
	fl, ac, c := archiveFlags("cat", a)
	if err := parseFlags(fl, c, a, args); err != nil {
		return err
	}
	if err := wantArgs(fl, 2, -1); err != nil {
		return err
	}
	ar, err := openArchive(ctx, a, fl, ac, fl.Arg(0), true)
	if err != nil {
		return err
	}
	defer ar.Close()
	for _, n := range fl.Args()[1:] {
		m, err := ar.Open(n)
		if err != nil {
			return archiveError(err)
		}
		_, err = ctxio.Copy(ctx, a.stdout, m)
		m.Close()
		if errors.Is(err, context.Canceled) {
			return interrupted("%s partly written", n)
		}
		if err != nil {
			return archiveError(err)
		}
	}
	return readDamage(ar, false)
}

func runArchiveRm(ctx context.Context, a *app, args []string) error {
	fl, ac, c := archiveFlags("rm", a)
	recursive := fl.BoolP("recursive", "r", false, "remove directory members with everything under them")
	if err := parseFlags(fl, c, a, args); err != nil {
		return err
	}
	if err := wantArgs(fl, 2, -1); err != nil {
		return err
	}
	ar, err := openArchive(ctx, a, fl, ac, fl.Arg(0), false)
	if err != nil {
		return err
	}
	defer ar.Close()
	var names []string
	for _, n := range fl.Args()[1:] {
		sel, err := ar.Select([]string{n})
		if err != nil {
			return err
		}
		if !*recursive && (len(sel) > 1 || sel[0].IsDir() || sel[0].Name != archive.SelectName(n)) {
			return usageError(fmt.Errorf("%s is a directory (use -r)", n))
		}
		for _, e := range sel {
			names = append(names, e.Name)
		}
	}
	if err := ar.Remove(names...); err != nil {
		return archiveError(err)
	}
	return archiveError(ar.Commit())
}

func runArchiveCompact(ctx context.Context, a *app, args []string) error {
	fl, ac, c := archiveFlags("compact", a)
	if err := parseFlags(fl, c, a, args); err != nil {
		return err
	}
	if err := wantArgs(fl, 1, 1); err != nil {
		return err
	}
	ar, err := openArchive(ctx, a, fl, ac, fl.Arg(0), false)
	if err != nil {
		return err
	}
	defer ar.Close()
	st, err := ar.Compact(ctx, nil)
	if errors.Is(err, context.Canceled) {
		return interrupted("%s is unchanged (the compacted copy was removed)", fl.Arg(0))
	}
	if err != nil {
		return archiveError(err)
	}
	fmt.Fprintf(a.stdout, "%d members; %s -> %s\n", st.Members, humanSize(st.BytesBefore), humanSize(st.BytesAfter))
	return nil
}

func runArchiveVerify(ctx context.Context, a *app, args []string) error {
	fl, ac, c := archiveFlags("verify", a)
	repair := fl.Bool("repair", false, "keep every member that authenticates and drop the rest (see above)")
	if err := parseFlags(fl, c, a, args); err != nil {
		return err
	}
	if err := wantArgs(fl, 1, 1); err != nil {
		return err
	}
	path := fl.Arg(0)
	cred, err := ac.credentials(a, fl, false)
	if err != nil {
		return err
	}
	defer cred.Wipe()
	if *repair {
		rep, err := archive.Repair(ctx, path, cred)
		if errors.Is(err, context.Canceled) {
			return interrupted("%s is unchanged", path)
		}
		if err != nil {
			return archiveError(err)
		}
		rep.WriteText(a.stdout)
	}
	ar, err := archive.Open(ctx, path, cred, &archive.OpenOptions{ReadOnly: true, Warn: func(m string) { a.warnf("%s", m) }})
	if errors.Is(err, archive.ErrDamaged) {
		// The index does not load: say what a repair would keep.
		fmt.Fprintf(a.stdout, "%s: DAMAGED: %v\n", path, err)
		p, err := archive.Check(ctx, path, cred)
		return planDamage(a, p, err)
	}
	if err != nil {
		return archiveError(err)
	}
	defer ar.Close()
	r, err := ar.Verify(ctx, nil)
	if errors.Is(err, context.Canceled) {
		return interrupted("verify stopped before the end")
	}
	if err != nil {
		return archiveError(err)
	}
	r.WriteText(a.stdout, path, ar)
	if r.OK() {
		return nil
	}
	plan, err := ar.Check(ctx)
	return planDamage(a, plan, err)
}

// planDamage prints what a repair would keep and remove (the plan Check
// made), and ends the command with exit 3.
func planDamage(a *app, p *archive.RepairPlan, err error) error {
	if errors.Is(err, context.Canceled) {
		return interrupted("stopped before working out what a repair would do")
	}
	if err != nil {
		return archiveError(err)
	}
	p.WriteText(a.stdout, false)
	return withCode(exitDamaged, errors.New("damaged: 'archive verify --repair' does what is said above"))
}

// sourcesError words a path archive.Sources refuses with the options
// that fix it.
func sourcesError(err error) error {
	var se *archive.SourceError
	switch {
	case !errors.As(err, &se):
		return err
	case se.Path == "-":
		return usageError(errors.New("- (standard input) needs --name"))
	case se.Err == archive.ErrNeedsName:
		return usageError(fmt.Errorf("%s: give the member a name with --name", se.Path))
	case se.Err == archive.ErrInvalidName:
		return usageError(fmt.Errorf("%q is not a valid member name", se.Name))
	}
	return usageError(fmt.Errorf("%s is a directory (use -r)", se.Path))
}

// addSourcesOptions are how add and create add files: standard input for
// -, a warning for what is skipped.
func addSourcesOptions(a *app, force bool) *archive.AddSourcesOptions {
	return &archive.AddSourcesOptions{Replace: force, Stdin: a.stdin, Skipped: func(s archive.Source, kind string) {
		a.warnf("%s: skipped (%s): only regular files and directories are archived", s.Path, kind)
	}}
}

// addSourcesError says why AddSources stopped (of total sources), with
// the exit code.
func addSourcesError(err error, total int) error {
	var ae *archive.AddSourcesError
	switch {
	case !errors.As(err, &ae):
		return err
	case ae.Source == nil:
		return interrupted("nothing added, the archive is unchanged (%d of %d files had been read)", ae.Done, total)
	case errors.Is(ae.Err, context.Canceled):
		return interrupted("nothing added, the archive is unchanged (%d of %d files had been read; stopped inside %s)", ae.Done, total, ae.Source.Path)
	case errors.Is(ae.Err, fs.ErrExist):
		return withCode(exitDestroy, fmt.Errorf("%s: member exists (use --force to replace it)", ae.Source.Name))
	}
	return ae.Err
}
