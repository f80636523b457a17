package resourcemanager

// This file holds the staging of applications' resources (the user's
// program and --files, YARN's staging directory): chunks written into the
// application's staging folder in order and hashed as they come, a commit
// that checks size and SHA-256, and the chunks node managers read back.

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"os"
	"path/filepath"

	"github.com/sparkrpc/sparkrpc/actor"
	"github.com/sparkrpc/sparkrpc/cluster"
	"github.com/sparkrpc/sparkrpc/internal/privatefile"
	"github.com/sparkrpc/sparkrpc/messages"
)

// defaultMaxStagedBytes is an application's staging bound when neither
// Config.MaxStagedBytes nor spark.sparkrpc.yarn.staging.maxAppSize says.
const defaultMaxStagedBytes = "8g"

// stagingArea keeps the resources applications stage, by application id.
// It belongs to the endpoint, which serialises its calls: it needs no lock.
// It holds no file open between calls, and no more than one chunk.
type stagingArea struct {
	root  string // the resource manager's staging folder
	limit int64  // the most bytes one application may stage
	chunk int    // the most bytes of one RmResourceChunk
	apps  map[string]*appStaging
}

// appStaging is what one application staged.
type appStaging struct {
	staged    int64 // bytes, all resources together
	resources map[string]*stagedResource
}

// stagedResource is one resource: being staged while sum is nil,
// committed once it is set.
type stagedResource struct {
	kind messages.RmResourceKind
	size int64
	hash hash.Hash
	sum  []byte
}

func newStagingArea(root string, limit int64, chunk int) *stagingArea {
	return &stagingArea{root: root, limit: limit, chunk: chunk, apps: make(map[string]*appStaging)}
}

func (s *stagingArea) path(appID, name string) string { return filepath.Join(s.root, appID, name) }

func (s *stagingArea) app(appID string) *appStaging {
	st, ok := s.apps[appID]
	if !ok {
		st = &appStaging{resources: make(map[string]*stagedResource)}
		s.apps[appID] = st
	}
	return st
}

// forget drops what s knows of appID's resources (its folder is removed by
// the caller).
func (s *stagingArea) forget(appID string) { delete(s.apps, appID) }

// drop removes one resource, file and all.
func (s *stagingArea) drop(appID, name string) {
	st := s.app(appID)
	if r, ok := st.resources[name]; ok {
		st.staged -= r.size
		delete(st.resources, name)
	}
	_ = os.Remove(s.path(appID, name))
}

// write stages m's data at the end of its resource, or anew from offset 0,
// and returns the resource's size so far.
func (s *stagingArea) write(m *messages.RmStageChunk) (int64, error) {
	appID, name, data := m.GetAppId(), m.GetName(), m.GetData()
	if err := cluster.ValidateResourceName(m.GetKind(), name); err != nil {
		return 0, err
	}
	if len(data) > cluster.MaxStageChunk {
		return 0, fmt.Errorf("cluster: a staged chunk holds at most %d bytes, not %d", cluster.MaxStageChunk, len(data))
	}
	st := s.app(appID)
	r := st.resources[name]
	switch off := m.GetOffset(); {
	case off == 0 && r == nil && len(st.resources) >= maxStagedResources:
		return 0, fmt.Errorf("%w: application %s may stage at most %d resources; %q was refused",
			cluster.ErrStagingLimit, appID, maxStagedResources, name)
	case off == 0:
		s.drop(appID, name)
		if err := privatefile.MkdirAll(filepath.Join(s.root, appID)); err != nil {
			return 0, fmt.Errorf("cluster: staging folder of %s: %w", appID, err)
		}
		f, err := privatefile.Create(s.path(appID, name))
		if err != nil {
			return 0, fmt.Errorf("cluster: staging %q of %s: %w", name, appID, err)
		}
		f.Close()
		r = &stagedResource{kind: m.GetKind(), hash: sha256.New()}
		st.resources[name] = r
	case r == nil || r.sum != nil:
		return 0, fmt.Errorf("%w: resource %q of %s is not being staged (a resource starts at offset 0)", cluster.ErrInvalidState, name, appID)
	case off != r.size || r.kind != m.GetKind():
		return 0, fmt.Errorf("%w: chunk of %s %q of %s at offset %d; it is a %s with %d bytes staged",
			cluster.ErrInvalidState, cluster.ResourceKindName(m.GetKind()), name, appID, off, cluster.ResourceKindName(r.kind), r.size)
	}
	n := int64(len(data))
	if st.staged+n > s.limit {
		return 0, &cluster.StagingLimitError{AppID: appID, Staged: st.staged, Chunk: n, Limit: s.limit}
	}
	if err := appendFile(s.path(appID, name), data); err != nil {
		s.drop(appID, name) // its file no longer matches what was hashed
		return 0, fmt.Errorf("cluster: staging %q of %s: %w", name, appID, err)
	}
	r.hash.Write(data)
	r.size += n
	st.staged += n
	return r.size, nil
}

// maxStagedResources bounds the resources one application stages: its
// program and its files. spark.sparkrpc.yarn.staging.maxAppSize bounds
// their bytes, which empty files do not count, while each takes a file of
// the staging folder and an entry in the resource manager's memory.
const maxStagedResources = 10_000

func appendFile(path string, data []byte) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// commit ends the staging of res: what was staged must have its size and
// digest, else the resource is dropped.
func (s *stagingArea) commit(appID string, res *messages.RmLocalResource) (int64, error) {
	name := res.GetName()
	if err := cluster.ValidateResourceName(res.GetKind(), name); err != nil {
		return 0, err
	}
	st := s.app(appID)
	r := st.resources[name]
	if r == nil && res.GetSize() == 0 { // an empty file: no chunk
		if _, err := s.write(&messages.RmStageChunk{AppId: appID, Name: name, Kind: res.GetKind()}); err != nil {
			return 0, err
		}
		r = st.resources[name]
	}
	switch {
	case r == nil:
		return 0, fmt.Errorf("%w: resource %q of %s: no chunk was staged", cluster.ErrNotStaged, name, appID)
	case r.sum != nil:
		if r.kind == res.GetKind() && r.size == res.GetSize() && bytes.Equal(r.sum, res.GetSha256()) {
			return r.size, nil
		}
		return 0, fmt.Errorf("%w: resource %q of %s is already committed with sha256 %s", cluster.ErrInvalidState, name, appID, hex.EncodeToString(r.sum))
	}
	sum := r.hash.Sum(nil)
	if r.kind != res.GetKind() || r.size != res.GetSize() || !bytes.Equal(sum, res.GetSha256()) {
		s.drop(appID, name)
		return 0, &cluster.ResourceMismatchError{Name: name, Size: r.size, SHA256: hex.EncodeToString(sum),
			WantSize: res.GetSize(), WantSHA256: hex.EncodeToString(res.GetSha256())}
	}
	r.sum, r.hash = sum, nil
	return r.size, nil
}

// check fails unless every one of resources is committed as it says, each
// name once.
func (s *stagingArea) check(appID string, resources []*messages.RmLocalResource) error {
	seen := make(map[string]bool, len(resources))
	for _, res := range resources {
		name := res.GetName()
		if err := cluster.ValidateResourceName(res.GetKind(), name); err != nil {
			return err
		}
		if seen[name] {
			return fmt.Errorf("%w: the submission names %q twice", cluster.ErrDuplicateResource, name)
		}
		seen[name] = true
		r := s.apps[appID].lookup(name)
		if r == nil || r.sum == nil {
			return fmt.Errorf("%w: the submission of %s names resource %q, which was not staged completely", cluster.ErrNotStaged, appID, name)
		}
		if r.kind != res.GetKind() || r.size != res.GetSize() || !bytes.Equal(r.sum, res.GetSha256()) {
			return &cluster.ResourceMismatchError{Name: name, Size: r.size, SHA256: hex.EncodeToString(r.sum),
				WantSize: res.GetSize(), WantSHA256: hex.EncodeToString(res.GetSha256())}
		}
	}
	return nil
}

func (st *appStaging) lookup(name string) *stagedResource {
	if st == nil {
		return nil
	}
	return st.resources[name]
}

// read returns at most length bytes (bounded by s.chunk) of a committed
// resource from offset; none at its end.
func (s *stagingArea) read(m *messages.RmFetchResource) ([]byte, error) {
	appID, name := m.GetAppId(), m.GetName()
	r := s.apps[appID].lookup(name)
	if r == nil || r.sum == nil {
		return nil, fmt.Errorf("%w: application %s has no staged resource %q", cluster.ErrNotStaged, appID, name)
	}
	if m.GetOffset() < 0 {
		return nil, fmt.Errorf("cluster: resource %q of %s: negative offset %d", name, appID, m.GetOffset())
	}
	n := int(m.GetLength())
	if n <= 0 || n > s.chunk {
		n = s.chunk
	}
	f, err := os.Open(s.path(appID, name))
	if err != nil {
		return nil, fmt.Errorf("%w: resource %q of %s: %v", cluster.ErrNotStaged, name, appID, err)
	}
	defer f.Close()
	buf := make([]byte, n)
	k, err := f.ReadAt(buf, m.GetOffset())
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("cluster: reading resource %q of %s: %w", name, appID, err)
	}
	return buf[:k], nil
}

// handleStaging registers the messages of staging: a submitter's chunks
// and commits, and node managers' reads.
func (e *rmEndpoint) handleStaging(r *actor.Router) {
	actor.HandleAsk(r, func(ctx *actor.CallContext, m *messages.RmStageChunk) (*messages.RmStageResponse, error) {
		if err := e.requireStager(ctx, m.GetAppId(), m.GetUser()); err != nil {
			return nil, err
		}
		e.core.apps[m.GetAppId()].staged = true // its folder goes with it
		size, err := e.staging.write(m)
		if err != nil {
			return nil, err
		}
		return &messages.RmStageResponse{Size: size}, nil
	})
	actor.HandleAsk(r, func(ctx *actor.CallContext, m *messages.RmStageCommit) (*messages.RmStageResponse, error) {
		if err := e.requireStager(ctx, m.GetAppId(), m.GetUser()); err != nil {
			return nil, err
		}
		e.core.apps[m.GetAppId()].staged = true
		res := m.GetResource()
		size, err := e.staging.commit(m.GetAppId(), res)
		if err != nil {
			e.log.Warn().Err(err).Str("app", m.GetAppId()).Str("resource", res.GetName()).Msg("staged resource refused")
			return nil, err
		}
		e.log.Info().Str("app", m.GetAppId()).Str("resource", res.GetName()).Str("kind", cluster.ResourceKindName(res.GetKind())).
			Int64("size", size).Str("sha256", hex.EncodeToString(res.GetSha256())).Msg("resource staged")
		return &messages.RmStageResponse{Size: size}, nil
	})
	actor.HandleAsk(r, func(ctx *actor.CallContext, m *messages.RmFetchResource) (*messages.RmResourceChunk, error) {
		if err := e.requireNodeOf(ctx, m.GetAppId(), "a staged resource"); err != nil {
			return nil, err
		}
		data, err := e.staging.read(m)
		if err != nil {
			return nil, err
		}
		return &messages.RmResourceChunk{Data: data}, nil
	})
}

// removeStaging removes appID's staging folder and what the staging area
// knows of it.
func (e *rmEndpoint) removeStaging(appID string) {
	e.staging.forget(appID)
	if err := os.RemoveAll(e.stagingDir(appID)); err != nil {
		e.log.Warn().Err(err).Str("app", appID).Msg("cannot remove the staging folder")
	}
}
