package kubeconf

// invalid.go holds the configuration errors of the Kubernetes cluster
// manager: they match ErrInvalidConfig and name the key.

import (
	"errors"

	"github.com/sparkrpc/sparkrpc/actor"
)

// ErrInvalidConfig is matched by configuration errors of this package (with
// errors.Is); errors.As finds the *actor.ConfError naming the key.
var ErrInvalidConfig = errors.New("kubernetes: invalid configuration")

type confError struct{ *actor.ConfError }

func (e confError) Unwrap() []error { return []error{e.ConfError, ErrInvalidConfig} }

// Invalid returns the error of key's value: why it is not valid. It
// matches ErrInvalidConfig, and errors.As finds the *actor.ConfError.
func Invalid(key, value, why string) error {
	return confError{&actor.ConfError{Key: key, Value: value, Err: errors.New(why)}}
}

// WrapInvalid makes an *actor.ConfError in err match ErrInvalidConfig too;
// other errors (and nil) are returned as they are.
func WrapInvalid(err error) error {
	var ce *actor.ConfError
	if errors.As(err, &ce) {
		return confError{ce}
	}
	return err
}
