package httpapi_test

import "github.com/subprov/subprov/jobs"

func billRun(provider, period string) jobs.BillRun {
	return jobs.BillRun{ProviderID: provider, Period: period}
}
