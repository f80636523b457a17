package webui

// This file holds the package's errors and the JSON error body of the API.

import (
	"encoding/json"
	"errors"
	"net/http"
)

var (
	// ErrInvalidConfig is returned by Start and StartDriverUI for a bad
	// port or setting; the message names the key.
	ErrInvalidConfig = errors.New("webui: invalid configuration")
	// ErrPortInUse is returned by Start when every port it may try is taken.
	ErrPortInUse = errors.New("webui: port in use")
	// ErrNoSecret is returned by SecretFromConf when spark.authenticate is
	// on and neither spark.authenticate.secret nor
	// spark.authenticate.secret.file is set.
	ErrNoSecret = errors.New("webui: spark.authenticate is true but neither spark.authenticate.secret nor spark.authenticate.secret.file is set")
)

// apiError is the JSON body of every API error: {"error": "...", "status": 404}.
type apiError struct {
	Error  string `json:"error"`
	Status int    `json:"status"`
}

// writeJSONError writes status with a JSON error body.
func writeJSONError(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(apiError{Error: msg, Status: status})
}

// writeJSON writes v as indented JSON with status 200.
func writeJSON(w http.ResponseWriter, v any) {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		writeJSONError(w, http.StatusInternalServerError, err.Error())
		return
	}
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	_, _ = w.Write(append(b, '\n'))
}
