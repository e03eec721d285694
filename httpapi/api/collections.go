package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"

	"strongbox/authn"
)

// Collections routes are for superusers only.

// collectionArg finds the collection named by the {collection} path value.
func (s *Server) collectionArg(r *http.Request) (*authn.Collection, error) {
	c, ok := s.pathCollection(r)
	if !ok {
		return nil, errNotFound(nil)
	}
	return c, nil
}

// pathCollection finds the collection the path names by id or name: a
// stored one, or one of the auth system base collections (_mfas, _otps,
// _externalAuths, _authOrigins), which exist as PocketBase defines them.
func (s *Server) pathCollection(r *http.Request) (*authn.Collection, bool) {
	name := r.PathValue("collection")
	if c, ok := s.auth.Collection(name); ok {
		return c, true
	}
	return s.auth.SystemCollection(name)
}

// readBody reads a raw request body (a JSON document).
func readBody(r *http.Request) ([]byte, error) {
	b, err := readAll(r)
	if err != nil {
		return nil, readError(err)
	}
	return b, nil
}

// readCollectionInput reads a collection definition: a body that must be
// one JSON object, whatever its Content-Type. Numbers stay json.Number, as
// sent, so that the store decodes them exactly as it would the body.
func readCollectionInput(r *http.Request) (authn.CollectionInput, error) {
	b, err := readBody(r)
	if err != nil {
		return authn.CollectionInput{}, err
	}
	if err := checkJSONShape(r, b); err != nil {
		return authn.CollectionInput{}, err
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v map[string]any
	if err := dec.Decode(&v); err != nil {
		return authn.CollectionInput{}, errBadRequest(msgLoadFailed, fmt.Errorf("decode collection: %w", err))
	}
	if _, err := dec.Token(); err != io.EOF {
		return authn.CollectionInput{}, errBadRequest(msgLoadFailed, errors.New("decode collection: data after the object"))
	}
	if v == nil {
		return authn.CollectionInput{}, errBadRequest(msgLoadFailed, errors.New("decode collection: not an object"))
	}
	return authn.CollectionInput{Values: v}, nil
}

// collectionError maps a store error of a collection change to the response.
func collectionError(msg string, err error) error {
	if data := validationData(err); data != nil {
		return errValidation(msg, data)
	}
	if errors.Is(err, authn.ErrInvalidJSON) {
		return errBadRequest(msgLoadFailed, err)
	}
	return err
}

// handleCollectionsList handles GET /api/collections.
func (s *Server) handleCollectionsList(w http.ResponseWriter, r *http.Request) error {
	if err := requireSuperuser(r, msgNotAllowed); err != nil {
		return err
	}
	q := query(r)
	pg, err := parsePaging(q.Get("page"), q.Get("perPage"), q.Get("skipTotal"))
	if err != nil {
		return err
	}
	// PocketBase lists its system base collections first (created first).
	all := append(s.auth.SystemCollections(), s.auth.Collections()...)
	cols, err := filterAndSort(all, q.Get("filter"), q.Get("sort"), collectionFields, s.now)
	if err != nil {
		return err
	}
	items := make([]*authn.Collection, len(cols))
	for i, c := range cols {
		items[i] = c.Public()
	}
	return writeJSON(w, r, http.StatusOK, pageOf(pg, items))
}

// handleCollectionCreate handles POST /api/collections.
func (s *Server) handleCollectionCreate(w http.ResponseWriter, r *http.Request) error {
	if err := requireSuperuser(r, msgNotAllowed); err != nil {
		return err
	}
	in, err := readCollectionInput(r)
	if err != nil {
		return err
	}
	c, err := s.auth.CreateCollection(in)
	if err != nil {
		return collectionError("Failed to create collection.", err)
	}
	s.log.Info("collection created", auditAttrs(r, "collection", c.Name, "collectionId", c.ID)...)
	return writeJSON(w, r, http.StatusOK, c.Public())
}

// handleCollectionView handles GET /api/collections/{collection}.
func (s *Server) handleCollectionView(w http.ResponseWriter, r *http.Request) error {
	if err := requireSuperuser(r, msgNotAllowed); err != nil {
		return err
	}
	c, err := s.collectionArg(r)
	if err != nil {
		return err
	}
	return writeJSON(w, r, http.StatusOK, c.Public())
}

// handleCollectionUpdate handles PATCH /api/collections/{collection}.
func (s *Server) handleCollectionUpdate(w http.ResponseWriter, r *http.Request) error {
	if err := requireSuperuser(r, msgNotAllowed); err != nil {
		return err
	}
	c, err := s.collectionArg(r)
	if err != nil {
		return err
	}
	in, err := readCollectionInput(r)
	if err != nil {
		return err
	}
	before, _ := json.Marshal(c) // every field, secrets too: only the keys are logged
	c, err = s.auth.UpdateCollection(c, in)
	if errors.Is(err, authn.ErrNotFound) {
		return errNotFound(err)
	}
	if err != nil {
		return collectionError("Failed to update collection.", err)
	}
	if keys := changedKeys(before, c, "updated"); len(keys) > 0 {
		s.log.Info("collection updated", auditAttrs(r, "collection", c.Name, "collectionId", c.ID, "changed", keys)...)
	}
	return writeJSON(w, r, http.StatusOK, c.Public())
}

// handleCollectionDelete handles DELETE /api/collections/{collection}.
func (s *Server) handleCollectionDelete(w http.ResponseWriter, r *http.Request) error {
	if err := requireSuperuser(r, msgNotAllowed); err != nil {
		return err
	}
	c, err := s.collectionArg(r)
	if err != nil {
		return err
	}
	switch err := s.auth.DeleteCollection(c); {
	case errors.Is(err, authn.ErrSystemCollection):
		return errBadRequest("System collections cannot be deleted.", err)
	case errors.Is(err, authn.ErrNotFound):
		return errNotFound(err)
	case err != nil:
		return err
	}
	s.log.Info("collection deleted", auditAttrs(r, "collection", c.Name, "collectionId", c.ID)...)
	return noContent(w)
}
