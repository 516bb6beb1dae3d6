package session

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"path/filepath"
	"sort"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/agentd-dev/agentd/config"
	"github.com/agentd-dev/agentd/protocol"
	"github.com/agentd-dev/agentd/providers"
	"github.com/agentd-dev/agentd/tools"
	"github.com/agentd-dev/agentd/tools/semindex"
)

// The semantic index: one per workspace root and embedding model (provider id + model), kept by
// the manager for every session on that root, stored under the state directory
// (index/<hash>.bin), built in the background when a session starts and brought up to date (only
// changed files are embedded) when a search finds it older than refreshAfter.
const refreshAfter = 15 * time.Second

// noticeEvery paces the progress notices of a build.
const noticeEvery = 5 * time.Second

type semantic struct {
	mu      sync.Mutex
	indexes map[string]*semEntry
}

type semEntry struct {
	ix       *semindex.Index
	building bool
	built    time.Time
	err      error
}

// embeddingTarget is the provider and model the settings embed with.
func embeddingTarget(set config.Settings) (id, model string, ok bool) {
	id, ok = set.EmbeddingProvider()
	if !ok {
		return "", "", false
	}
	return id, set.Providers[id].EmbeddingModel, true
}

// semanticEntry is the index of root for the settings' embedding model, opened on first use.
func (m *Manager) semanticEntry(root string, set config.Settings) *semEntry {
	id, model, ok := embeddingTarget(set)
	if !ok {
		return nil
	}
	key := root + "\x00" + id + "\x00" + model
	m.sem.mu.Lock()
	defer m.sem.mu.Unlock()
	if e := m.sem.indexes[key]; e != nil {
		return e
	}
	file := ""
	if m.d.StateDir != "" {
		sum := sha256.Sum256([]byte(key))
		file = filepath.Join(m.d.StateDir, "index", hex.EncodeToString(sum[:12])+".bin")
	}
	e := &semEntry{ix: semindex.Open(root, file, m.embedder(id, model))}
	if m.sem.indexes == nil {
		m.sem.indexes = map[string]*semEntry{}
	}
	m.sem.indexes[key] = e
	return e
}

// embedder embeds through the provider id (resolved for each call, so a key set meanwhile is
// used) with model.
func (m *Manager) embedder(id, model string) semindex.Embed {
	return func(ctx context.Context, texts []string) ([][]float32, error) {
		prov, _, err := m.d.Providers.Provider(ctx, id)
		if err != nil {
			return nil, err
		}
		e, ok := prov.(providers.Embedder)
		if !ok {
			return nil, fmt.Errorf("the provider %q cannot embed text (its dialect has no embeddings endpoint); set embeddingModel on an openai or gemini provider", id)
		}
		return e.Embed(ctx, model, texts)
	}
}

// refreshIndexes starts a background build of the session's indexes that are not being built
// and were not built within the last refreshAfter (a zero age builds unless one is running).
// report says whether the session gets progress notices.
func (s *Session) refreshIndexes(set config.Settings, age time.Duration, report bool) {
	m := s.m
	for _, root := range s.roots.Dirs() {
		e := m.semanticEntry(root, set)
		if e == nil {
			return
		}
		m.sem.mu.Lock()
		if e.building || (!e.built.IsZero() && time.Since(e.built) < age) {
			m.sem.mu.Unlock()
			continue
		}
		e.building = true
		told := e.err // the last build's failure, which a session was told of already
		m.sem.mu.Unlock()
		m.bg.Add(1)
		go func() {
			defer m.bg.Done()
			var last time.Time
			progress := func(p semindex.Progress) {
				if !report || p.Embedded == 0 && p.Err == nil {
					return
				}
				switch {
				case p.Finished && p.Err != nil:
					if told != nil && told.Error() == p.Err.Error() {
						return // the same failure as last time (a missing key, say): said once, not per session
					}
					s.notice(protocol.SeverityWarning, "Semantic index incomplete",
						fmt.Sprintf("%s: %d of %d files indexed; semantic_search covers only those. %v", root, p.Done, p.Total, p.Err))
				case p.Finished:
					s.notice(protocol.SeverityInfo, "Semantic index ready", fmt.Sprintf("%s: %d files indexed (%d embedded now)", root, p.Total, p.Embedded))
				case time.Since(last) >= noticeEvery:
					last = time.Now()
					s.notice(protocol.SeverityInfo, "Indexing for semantic search", fmt.Sprintf("%s: %d of %d files", root, p.Done, p.Total))
				}
			}
			err := e.ix.Build(m.bgCtx, progress)
			if err != nil && !errors.Is(err, context.Canceled) {
				m.log.Warn("semantic index", zap.String("root", root), zap.Error(err))
			}
			m.sem.mu.Lock()
			e.building, e.built, e.err = false, time.Now(), err
			m.sem.mu.Unlock()
		}()
	}
}

// semanticIndex is the Env.Semantic of a call: the session's roots' indexes, or nil without an
// embedding model.
func (t *turn) semanticIndex() tools.SemanticIndex {
	if _, _, ok := embeddingTarget(t.set); !ok {
		return nil
	}
	return sessionSemantic{s: t.s, set: t.set}
}

type sessionSemantic struct {
	s   *Session
	set config.Settings
}

// Search searches every root's index and merges the hits by score. A search first brings an
// index older than refreshAfter up to date in the background (the search itself uses what is
// indexed now).
func (a sessionSemantic) Search(ctx context.Context, query string, max int) (tools.SemanticResult, error) {
	var res tools.SemanticResult
	a.s.refreshIndexes(a.set, refreshAfter, false)
	var firstErr error
	for _, root := range a.s.roots.Dirs() {
		e := a.s.m.semanticEntry(root, a.set)
		if e == nil {
			break
		}
		files, _, pending := e.ix.Stats()
		res.Files += files
		res.Pending += pending
		hits, err := e.ix.Search(ctx, query, max)
		if err != nil {
			if !errors.Is(err, semindex.ErrEmpty) && firstErr == nil {
				firstErr = err
			}
			continue
		}
		for _, h := range hits {
			res.Hits = append(res.Hits, tools.SemanticHit{Path: filepath.Join(root, filepath.FromSlash(h.Path)), StartLine: h.Start, EndLine: h.End, Score: h.Score})
		}
	}
	if len(res.Hits) == 0 && firstErr != nil {
		return res, firstErr
	}
	sort.SliceStable(res.Hits, func(i, j int) bool { return res.Hits[i].Score > res.Hits[j].Score })
	if len(res.Hits) > max {
		res.Hits = res.Hits[:max]
	}
	return res, nil
}
