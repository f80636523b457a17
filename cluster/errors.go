package cluster

// This file holds the package's sentinel and typed errors and the exit
// codes of containers and application masters.

import (
	"errors"
	"fmt"
	"strings"
)

// Sentinel errors of package cluster. Match them with errors.Is.
var (
	// ErrUnknownClass is returned by LookupApp callers (and the application
	// master) for an application name that no package registered.
	ErrUnknownClass = errors.New("cluster: unknown application")
	// ErrUnknownAppID is returned by the resource manager for an
	// application id it does not know.
	ErrUnknownAppID = errors.New("cluster: unknown application id")
	// ErrInvalidMaster is returned by ParseMaster for a malformed master string.
	ErrInvalidMaster = errors.New("cluster: invalid master URL")
	// ErrResourceTooLarge is returned when a container asks for more memory or
	// cores than any node of the cluster has.
	ErrResourceTooLarge = errors.New("cluster: resource request above the cluster's maximum")
	// ErrUnknownQueue is returned when an application is submitted to a queue
	// the resource manager does not have.
	ErrUnknownQueue = errors.New("cluster: unknown queue")
	// ErrInvalidState is returned for an operation that the application's
	// current state does not allow (e.g. submitting twice).
	ErrInvalidState = errors.New("cluster: invalid application state")
	// ErrAppFailed is matched by the error of an application that did not
	// end with final status SUCCEEDED (see *AppFailedError).
	ErrAppFailed = errors.New("cluster: application did not succeed")
	// ErrRegistrationFailed is returned by nodemanager.Start when the node
	// could not register with the resource manager (RegisterTimeout passed
	// or its ctx ended).
	ErrRegistrationFailed = errors.New("cluster: node manager could not register")
	// ErrInvalidConfig is matched by the error for a configuration struct
	// (SubmitConfig, appmaster.Config, nodemanager.Config, yarn.LocalClusterConfig)
	// without a required field or with a value out of range; the error
	// names the field.
	ErrInvalidConfig = errors.New("cluster: invalid configuration")
	// ErrNoNodeManagers is returned by Client.Submit when no node manager
	// is registered with the resource manager: nothing could run.
	ErrNoNodeManagers = errors.New("cluster: no node managers are registered with the resource manager")
	// ErrInvalidID is matched by the error for an application or container
	// id that is not of the form the resource manager mints (see
	// *InvalidIDError): such an id never becomes part of a path.
	ErrInvalidID = errors.New("cluster: invalid id")
	// ErrPermissionDenied is matched by the error for a request its peer or
	// user may not make: a container start that does not come from the
	// node's resource manager, an application master's message for another
	// application, a kill or a log read that the application's ACLs do not
	// allow.
	ErrPermissionDenied = errors.New("cluster: permission denied")

	// ErrNoProgram: a master whose containers run this process's program
	// was given neither SubmitConfig.Program nor Executable, and this
	// program may not play the roles a container is started in.
	ErrNoProgram = errors.New("cluster: no program for the containers")

	// ErrInContainer: Submit was called by a process that a cluster started
	// in a container, to play a role (application master, executor) that
	// only package launcher plays; submitting again would start containers
	// without end.
	ErrInContainer = errors.New("cluster: submit called in a container")
	// ErrTooManyNewApps is returned for a new application while the
	// resource manager holds its limit of applications created and not yet
	// submitted (NEW): submit or kill some first.
	ErrTooManyNewApps = errors.New("cluster: too many applications created and not submitted")
)

// InvalidIDError is the error for a malformed application or container id.
type InvalidIDError struct {
	Kind, ID, Want string
}

func (e *InvalidIDError) Error() string {
	return fmt.Sprintf("cluster: invalid %s id %q (expected %s)", e.Kind, e.ID, e.Want)
}

// Is matches ErrInvalidID.
func (e *InvalidIDError) Is(target error) bool { return target == ErrInvalidID }

// wrapError is an error "cluster: <msg>: <err>" that unwraps to err and
// does not repeat err's own "cluster: " prefix.
type wrapError struct {
	msg string
	err error
}

func (e *wrapError) Error() string {
	return "cluster: " + e.msg + ": " + strings.TrimPrefix(e.err.Error(), "cluster: ")
}

func (e *wrapError) Unwrap() error { return e.err }

// Wrapf wraps err with a message, keeping one "cluster: " prefix.
func Wrapf(err error, format string, args ...any) error {
	return &wrapError{msg: fmt.Sprintf(format, args...), err: err}
}

// Application master exit codes (Spark's ApplicationMaster.EXIT_*).
const (
	// ExitSuccess: the application succeeded.
	ExitSuccess = 0
	// ExitUncaughtException: the AM itself failed.
	ExitUncaughtException = 10
	// ExitMaxExecutorFailures: too many executors failed.
	ExitMaxExecutorFailures = 11
	// ExitReporterFailure: the AM could not heartbeat the resource manager.
	ExitReporterFailure = 12
	// ExitSCNotInited: the application did not bring up its driver in time.
	ExitSCNotInited = 13
	// ExitExceptionUserClass: the application failed or is unknown.
	ExitExceptionUserClass = 15
	// ExitEarly: the AM was stopped before the application ended.
	ExitEarly = 16
	// ExitDisconnected: the AM lost its driver.
	ExitDisconnected = 17
)

// A container's exit status, as YARN's ContainerExitStatus and a node
// manager report it: the process's exit code, ExitSignalBase plus the signal
// that ended it, or one of the negative statuses below.
const (
	// ExitSignalBase plus a signal's number is the status of a container
	// that a signal ended (as a shell reports it).
	ExitSignalBase = 128
	// ContainerExitAborted: the cluster gave up on the container, e.g.
	// because its node was lost (YARN's ABORTED).
	ContainerExitAborted = -100
	// ContainerExitPreempted: the container was preempted.
	ContainerExitPreempted = -102
	// ContainerExitKilledByAM: stopped at the application master's request.
	ContainerExitKilledByAM = -105
	// ContainerExitKilledByRM: stopped by the resource manager (the
	// application was killed or ended).
	ContainerExitKilledByRM = -106
	// ContainerExitAfterAppDone: stopped because its application ended.
	ContainerExitAfterAppDone = -107
	// ContainerExitInvalid: no status is known.
	ContainerExitInvalid = -1000
)

// AppFailedError is the error of an application that ended with a final
// status other than SUCCEEDED.
type AppFailedError struct {
	AppID       string
	State       AppState
	FinalStatus FinalStatus
	Diagnostics string
}

func (e *AppFailedError) Error() string {
	msg := fmt.Sprintf("Application %s finished with %s status (state %s)", e.AppID, lower(e.FinalStatus.String()), e.State)
	if e.State == StateKilled {
		msg = fmt.Sprintf("Application %s is killed", e.AppID)
	}
	if e.Diagnostics != "" {
		msg += ": " + e.Diagnostics
	}
	return msg
}

// Is reports whether target is ErrAppFailed.
func (e *AppFailedError) Is(target error) bool { return target == ErrAppFailed }

// AMExitError carries the exit code a process of the cluster (application
// master, executor) should end with, and why.
type AMExitError struct {
	Code   int
	Reason string
	// Err is the cause, when one can be matched with errors.Is or
	// errors.As (e.g. ErrInvalidConfig); it may be nil.
	Err error
}

func (e *AMExitError) Error() string { return fmt.Sprintf("exit code %d: %s", e.Code, e.Reason) }

// Unwrap returns the cause, or nil.
func (e *AMExitError) Unwrap() error { return e.Err }

// ConfigError is the ErrInvalidConfig error for field of config.
func ConfigError(config, field, format string, args ...any) error {
	return fmt.Errorf("%w: %s.%s %s", ErrInvalidConfig, config, field, fmt.Sprintf(format, args...))
}

// UnknownClassError reports an application name that is not registered.
type UnknownClassError struct{ Name string }

func (e *UnknownClassError) Error() string {
	return fmt.Sprintf("application class not found: %s (registered: %s)", e.Name, joinNames(Apps()))
}

// Is reports whether target is ErrUnknownClass.
func (e *UnknownClassError) Is(target error) bool { return target == ErrUnknownClass }

// ResourceTooLargeError reports a container request above what the largest
// node can give.
type ResourceTooLargeError struct {
	What      string // "AM" or "executor"
	Requested Resource
	Max       Resource

	// Hint replaces the advice about the node managers when not empty.
	Hint string
}

func (e *ResourceTooLargeError) Error() string {
	if e.Requested.MemoryMB > e.Max.MemoryMB {
		hint := e.Hint
		if hint == "" {
			hint = "Please check the memory of the node managers (nodemanager --memory) or lower the requested memory."
		}
		return fmt.Sprintf("Required %s memory (%d MB) is above the max threshold (%d MB) of this cluster! %s",
			e.What, e.Requested.MemoryMB, e.Max.MemoryMB, hint)
	}
	hint := e.Hint
	if hint == "" {
		hint = "Please check the cores of the node managers (nodemanager --cores) or lower the requested cores."
	}
	return fmt.Sprintf("Required %s cores (%d) is above the max threshold (%d cores) of this cluster! %s",
		e.What, e.Requested.Cores, e.Max.Cores, hint)
}

// Is reports whether target is ErrResourceTooLarge.
func (e *ResourceTooLargeError) Is(target error) bool { return target == ErrResourceTooLarge }

// RemoteIs reports whether err is target, also when err came over the wire
// from another env (then only its text is left, which holds target's).
func RemoteIs(err, target error) bool {
	return errors.Is(err, target) || err != nil && strings.Contains(err.Error(), target.Error())
}

// ErrNoSuchLog is returned for a container log file a node manager does
// not have.
var ErrNoSuchLog = errors.New("cluster: no such container log")

// Errors of staged resources (the user's program and --files): staging on
// the resource manager, localization on the node managers. The text of
// each typed error below starts with its sentinel's, so that RemoteIs
// matches it once it crossed the wire.
var (
	// ErrDuplicateResource is matched by the error for two resources of one
	// submission with one name, such as two --files with one base name
	// (see *DuplicateResourceError): nothing is sent.
	ErrDuplicateResource = errors.New("cluster: two resources with one name")
	// ErrResourceMismatch is matched by the error for a staged resource
	// whose size or SHA-256 is not what its submitter stated (see
	// *ResourceMismatchError): on the resource manager when the resource is
	// committed, on a node manager when it localizes it.
	ErrResourceMismatch = errors.New("cluster: resource size or digest mismatch")
	// ErrStagingLimit is matched by the error for a chunk that would take
	// an application's staged bytes past the resource manager's
	// spark.sparkrpc.yarn.staging.maxAppSize (see *StagingLimitError).
	ErrStagingLimit = errors.New("cluster: staged resources above the application's limit")
	// ErrNotStaged is returned for a resource that the resource manager has
	// not staged completely: a submission or a node manager's read that
	// names a resource never committed, or whose file is gone.
	ErrNotStaged = errors.New("cluster: resource not staged")
	// ErrLocalization is matched by the error of a container whose
	// resources a node manager could not localize (see *LocalizationError);
	// its text is the container's diagnostics.
	ErrLocalization = errors.New("cluster: resource localization failed")
)

// DuplicateResourceError reports two resources of one submission with one
// name, such as two --files with one base name.
type DuplicateResourceError struct {
	// Name is the resource name both would have; Paths are their paths.
	Name  string
	Paths []string
}

func (e *DuplicateResourceError) Error() string {
	return fmt.Sprintf("%v: %s would both be staged as %q: files must have distinct base names", ErrDuplicateResource, strings.Join(e.Paths, " and "), e.Name)
}

// Is matches ErrDuplicateResource, and ErrInvalidConfig: it is a mistake in
// the submission's configuration.
func (e *DuplicateResourceError) Is(target error) bool {
	return target == ErrDuplicateResource || target == ErrInvalidConfig
}

// ResourceMismatchError reports a resource whose content is not what its
// submitter stated: Size and SHA256 (hex) are what was found, WantSize and
// WantSHA256 what was stated.
type ResourceMismatchError struct {
	Name               string
	Size, WantSize     int64
	SHA256, WantSHA256 string
}

func (e *ResourceMismatchError) Error() string {
	return fmt.Sprintf("%v: %q has %d bytes with sha256 %s, expected %d bytes with sha256 %s",
		ErrResourceMismatch, e.Name, e.Size, e.SHA256, e.WantSize, e.WantSHA256)
}

// Is matches ErrResourceMismatch.
func (e *ResourceMismatchError) Is(target error) bool { return target == ErrResourceMismatch }

// StagingLimitError reports a chunk refused because the application's
// staged bytes would pass Limit (spark.sparkrpc.yarn.staging.maxAppSize).
type StagingLimitError struct {
	AppID string
	// Staged is what the application had staged, Chunk the refused chunk's
	// size.
	Staged, Chunk, Limit int64
}

func (e *StagingLimitError) Error() string {
	return fmt.Sprintf("%v: application %s may stage at most %d bytes (%s on the resource manager); %d are staged and a chunk of %d more was refused",
		ErrStagingLimit, e.AppID, e.Limit, KeyStagingMaxAppSize, e.Staged, e.Chunk)
}

// Is matches ErrStagingLimit.
func (e *StagingLimitError) Is(target error) bool { return target == ErrStagingLimit }

// LocalizationError is the error of a container whose resource Name (of
// Kind) a node manager could not localize: a size or digest mismatch
// (Err matches ErrResourceMismatch), a resource the resource manager does
// not have, a write error such as a full disk.
type LocalizationError struct {
	AppID, ContainerID string
	Name, Kind         string
	Err                error
}

func (e *LocalizationError) Error() string {
	return fmt.Sprintf("%v: %q (%s) of application %s, container %s: %s",
		ErrLocalization, e.Name, e.Kind, e.AppID, e.ContainerID, strings.TrimPrefix(e.Err.Error(), "cluster: "))
}

// Is matches ErrLocalization.
func (e *LocalizationError) Is(target error) bool { return target == ErrLocalization }

// Unwrap returns the cause.
func (e *LocalizationError) Unwrap() error { return e.Err }
