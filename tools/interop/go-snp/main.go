// snp-instance-info: Go's encoding/json view of the SEV-SNP instance info (docs/protocol/sev-snp.md
// §7), written from that document. `roundtrip` decodes stdin into the struct and writes Go's
// encoding of it; `sample` writes Go's encoding of fixed sample values (GCE and Azure sections set).
package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
)

type gceInstanceInfo struct {
	Zone          string `json:"zone,omitempty"`
	ProjectId     string `json:"project_id,omitempty"`
	ProjectNumber uint64 `json:"project_number,omitempty"`
	InstanceName  string `json:"instance_name,omitempty"`
	InstanceId    uint64 `json:"instance_id,omitempty"`
}

type azureInstanceInfo struct {
	RuntimeData []byte
	MAAToken    string
}

type snpInstanceInfo struct {
	ReportSigner      []byte
	CertChain         []byte
	AttestationReport []byte
	Azure             *azureInstanceInfo
	GCP               *gceInstanceInfo
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, err)
	os.Exit(1)
}

func main() {
	if len(os.Args) != 2 {
		fail(fmt.Errorf("usage: snp-instance-info roundtrip|sample"))
	}
	var info snpInstanceInfo
	switch os.Args[1] {
	case "roundtrip":
		in, err := io.ReadAll(os.Stdin)
		if err != nil {
			fail(err)
		}
		if err := json.Unmarshal(in, &info); err != nil {
			fail(err)
		}
	case "sample":
		info = snpInstanceInfo{
			ReportSigner:      []byte("-----BEGIN CERTIFICATE-----\nVLEK\n-----END CERTIFICATE-----\n"),
			AttestationReport: []byte{0, 1, 2, 0xfe, 0xff},
			Azure:             &azureInstanceInfo{RuntimeData: []byte(`{"keys":[]}`), MAAToken: "a<b>&c"},
			GCP:               &gceInstanceInfo{Zone: "europe-west3-a", ProjectId: "p", ProjectNumber: 18446744073709551615, InstanceName: "node-1"},
		}
	default:
		fail(fmt.Errorf("unknown command %q", os.Args[1]))
	}
	out, err := json.Marshal(info)
	if err != nil {
		fail(err)
	}
	os.Stdout.Write(out)
}
