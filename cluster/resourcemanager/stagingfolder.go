// The folder of the applications' staging folders: made, or taken and
// swept, at start; swept of its own applications' folders at Shutdown.

package resourcemanager

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/rs/zerolog"
	"github.com/sparkrpc/sparkrpc/cluster"
)

// openStagingFolder makes rm's staging folder, a new one under the
// system's temporary folder when the Config names none, or takes the one
// it names (made if missing, mode 0700; an existing folder keeps its mode).
// A given folder is locked shared for rm's life, which tells other
// resource managers on it that rm runs; when none other holds it, what
// resource managers that stopped or died there left is removed.
func (rm *ResourceManager) openStagingFolder() error {
	dir := rm.cfg.StagingDir
	if dir == "" {
		d, err := os.MkdirTemp("", "sparkrpc-staging-")
		if err != nil {
			return fmt.Errorf("cluster: resource manager staging folder: %w", err)
		}
		rm.cfg.StagingDir, rm.ownStaging = d, true
		return nil
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("cluster: resource manager staging folder: %w", err)
	}
	alone, share, release, err := lockStaging(dir)
	if err != nil {
		return fmt.Errorf("cluster: resource manager staging folder: %w", err)
	}
	if alone {
		// What a resource manager that stopped or died on this folder
		// staged belongs to applications no resource manager will know
		// again: nothing else would ever remove it. With another running
		// on the folder, what is there may be its own.
		removeAppStaging(dir, "", rm.log)
	} else {
		rm.log.Info().Str("staging", dir).Msg("another resource manager runs on the staging folder: what it holds is left there")
	}
	share()
	rm.unlockStaging = release
	return nil
}

// closeStagingFolder ends rm's use of its staging folder: one it made is
// removed; in a given one, when clean (a Shutdown that did not time out),
// its own applications' folders are, as no resource manager will know
// them again (those of another resource manager on the folder are its
// own), and the folder's lock is released.
func (rm *ResourceManager) closeStagingFolder(clean bool) {
	switch {
	case rm.ownStaging:
		_ = os.RemoveAll(rm.cfg.StagingDir)
	case clean:
		removeAppStaging(rm.cfg.StagingDir, fmt.Sprintf("application_%d_", rm.ts), rm.log)
	}
	if rm.unlockStaging != nil {
		rm.unlockStaging()
	}
}

// removeAppStaging removes the applications' staging folders from the
// staging folder dir: the entries named as application ids (starting with
// prefix), and nothing else a folder given by its user may hold.
func removeAppStaging(dir, prefix string, log zerolog.Logger) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		log.Warn().Err(err).Str("staging", dir).Msg("cannot list the staging folder")
		return
	}
	for _, e := range entries {
		if cluster.ValidateAppID(e.Name()) != nil || !strings.HasPrefix(e.Name(), prefix) {
			continue
		}
		if err := os.RemoveAll(filepath.Join(dir, e.Name())); err != nil {
			log.Warn().Err(err).Str("app", e.Name()).Msg("cannot remove the staging folder")
		}
	}
}
