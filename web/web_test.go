package web

import (
	"github.com/subprov/subprov/locale"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestEveryPageParsesAndMessageRenders(t *testing.T) {
	r, err := NewRenderer()
	if err != nil {
		t.Fatal(err)
	}
	w := httptest.NewRecorder()
	if err := r.Message(w, 410, locale.EN, "Link expired", "Ask for a <new> link."); err != nil {
		t.Fatal(err)
	}
	body := w.Body.String()
	if w.Code != 410 || !strings.Contains(body, "<title>Link expired — subprov</title>") || !strings.Contains(body, "Ask for a &lt;new&gt; link.") {
		t.Fatalf("got %d %s", w.Code, body)
	}
	if ct := w.Header().Get("Content-Type"); ct != "text/html; charset=utf-8" {
		t.Fatalf("content type %q", ct)
	}
	if err := r.Render(httptest.NewRecorder(), 200, "nope", Page{}); err == nil {
		t.Fatal("an unknown page must be an error")
	}
}
