package httpapi_test

import (
	"testing"

	"github.com/subprov/subprov/internal/apptest"
)

func TestMain(m *testing.M) { apptest.Main(m) }
