package console

import (
	"errors"
	"mime"
	"net/http"

	"github.com/subprov/subprov"
	"github.com/subprov/subprov/httpapi/api"
)

// maxUpload bounds a form that carries a file: the API's body limit for the same upload, with
// room for the form's other fields.
const maxUpload = 1<<20 + maxForm

// readUpload reads a route's form that carries a file (multipart/form-data, as a file input
// sends it; a form without a file may come url-encoded). Its fields are in r.PostForm and its
// files in r.MultipartForm, all in memory: the body is bounded by maxUpload.
func readUpload(w http.ResponseWriter, r *http.Request, _ int64) error {
	ct, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if ct != "multipart/form-data" {
		return api.ReadForm(w, r, maxUpload)
	}
	r.Body = http.MaxBytesReader(w, r.Body, maxUpload)
	if err := r.ParseMultipartForm(maxUpload); err != nil {
		if tooBig := new(http.MaxBytesError); errors.As(err, &tooBig) {
			return subprov.Errorf(subprov.ETOOLARGE, "too_large", "The file is larger than 1 MiB. Split it and import each part.")
		}
		return subprov.Errorf(subprov.EBADREQUEST, "bad_form", "The form could not be read. Please go back and try again.")
	}
	return nil
}
